use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[derive(Debug)]
pub struct PlainError;

#[breaker(timeout = "800ms")]
async fn lookup() -> Result<u32, PlainError> {
    Ok(1)
}

fn main() {}
