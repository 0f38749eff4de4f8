use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(fallback = confirm_by_emial)]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

fn confirm_by_email(_: fusebox::Error<MyError>) -> Result<u32, MyError> {
    Ok(0)
}

fn main() {}
