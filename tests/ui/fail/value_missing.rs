use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}
#[breaker(timeout)]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

#[breaker(key = , max_keys = 10)]
async fn keyed(id: u32) -> Result<u32, MyError> {
    Ok(id)
}

#[breaker(failure_rate = 50%)]
async fn percent_sign() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {}
