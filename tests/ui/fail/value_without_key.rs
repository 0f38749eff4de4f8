use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker("payments")]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

#[breaker(timeout = "1s", 800)]
async fn other() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {}

#[fusebox::bulkhead(60)]
async fn pooled() -> Result<u32, MyError> {
    Ok(1)
}

#[fusebox::bulkhead(pool = 6 max_wait = "1s")]
async fn missing_comma() -> Result<u32, MyError> {
    Ok(1)
}
