use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(trip_p95 = "500ms", trip_p99 = "2s")]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {}
