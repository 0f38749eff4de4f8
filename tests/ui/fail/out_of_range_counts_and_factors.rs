use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}
#[breaker(backoff = 0.5, open_for_max = "60s")]
async fn shrinking() -> Result<u32, MyError> {
    Ok(1)
}

#[breaker(key = id, max_keys = 0)]
async fn no_keys(id: u32) -> Result<u32, MyError> {
    Ok(id)
}

#[breaker(failure_rate = -5)]
async fn negative() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {}
