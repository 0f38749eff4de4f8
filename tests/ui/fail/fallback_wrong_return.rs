use fusebox::{breaker, Rejection};

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

fn cached(_: fusebox::Error<MyError>) -> Option<u32> {
    Some(0)
}

fn main() {}
