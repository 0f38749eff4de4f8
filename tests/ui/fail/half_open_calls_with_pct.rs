use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(half_open_pct = 5, half_open_calls = 3)]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {}
