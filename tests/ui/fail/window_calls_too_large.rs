use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(name = "big", window_calls = 2000000, min_calls = 5, failure_rate = 10)]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {}
