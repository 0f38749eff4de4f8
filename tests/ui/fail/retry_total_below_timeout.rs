use fusebox::{breaker, retry, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[retry(attempts = 3, total = "500ms")]
#[breaker(name = "ui-retry-total-timeout", timeout = "1s")]
async fn get() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {
    let _ = get();
}
