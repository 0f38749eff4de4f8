// A non-`Result` function whose fallback returns another type: one error, at the path.
use fusebox::{breaker, Error, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(fallback = cached)]
async fn lookup() -> String {
    String::new()
}

fn cached(_: Error<std::convert::Infallible>) -> u32 {
    0
}
fn main() {}
