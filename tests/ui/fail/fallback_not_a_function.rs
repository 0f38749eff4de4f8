// A fallback that is not a function at all: one error, at the path.
use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

const CACHED: u32 = 0;

#[breaker(fallback = CACHED)]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}
fn main() {}
