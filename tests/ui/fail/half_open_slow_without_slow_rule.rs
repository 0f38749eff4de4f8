use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(half_open_slow = "3s")]
async fn warmup() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {}
