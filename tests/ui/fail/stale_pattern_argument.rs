use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(stale_for = "10m")]
async fn sum((a, b): (u32, u32)) -> Result<u32, MyError> {
    Ok(a + b)
}

fn main() {}
