use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(stale_key = id)]
async fn keyed(id: u32) -> Result<u32, MyError> {
    Ok(id)
}

#[breaker(stale_capacity = 100)]
async fn bounded(id: u32) -> Result<u32, MyError> {
    Ok(id)
}

#[breaker(stale_fallback = keep)]
async fn marked(id: u32) -> Result<u32, MyError> {
    Ok(id)
}

fn keep(s: fusebox::Stale<u32>, _: fusebox::Error<MyError>) -> Result<u32, MyError> {
    Ok(s.value)
}

fn main() {}
