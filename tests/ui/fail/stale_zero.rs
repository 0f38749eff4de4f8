use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(stale_for = "0s")]
async fn never_stale(id: u32) -> Result<u32, MyError> {
    Ok(id)
}

#[breaker(stale_for = "10m", stale_capacity = 0)]
async fn keeps_nothing(id: u32) -> Result<u32, MyError> {
    Ok(id)
}

fn main() {}
