use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(failure_rate = 150)]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

#[breaker(half_open_pct = 0)]
async fn other() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {}
