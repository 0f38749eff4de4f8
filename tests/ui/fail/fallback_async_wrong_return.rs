// An async fallback whose future resolves to the wrong type: one error, at the path.
use fusebox::{breaker, Error, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(fallback = cached)]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

async fn cached(_: Error<MyError>) -> Option<u32> {
    Some(0)
}
fn main() {}
