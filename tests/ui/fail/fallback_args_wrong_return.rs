// A fallback taking the arguments, returning the wrong type: one error, at the path.
use fusebox::{breaker, Error, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(fallback = cached)]
async fn lookup(id: u32) -> Result<u32, MyError> {
    Ok(id)
}

fn cached(_: &u32, _: Error<MyError>) -> Option<u32> {
    Some(0)
}
fn main() {}
