use fusebox::{breaker, retry, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

fn pushback(_: &MyError) -> u64 {
    1
}

#[retry(retry_after = pushback)]
#[breaker(name = "ui-retry-after")]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {
    let _ = lookup();
}
