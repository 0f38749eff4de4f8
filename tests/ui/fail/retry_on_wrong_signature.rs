use fusebox::{breaker, retry, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

fn transient(e: &str) -> bool {
    e.is_empty()
}

#[retry(retry_on = transient)]
#[breaker(name = "ui-retry-on")]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {
    let _ = lookup();
}
