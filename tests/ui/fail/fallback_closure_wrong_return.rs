// A closure fallback returning the wrong type: one error, at the closure.
use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(fallback = |_| Some(0))]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}
fn main() {}
