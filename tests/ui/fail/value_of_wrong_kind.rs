use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}
#[breaker(failure_rate = "50")]
async fn quoted_number() -> Result<u32, MyError> {
    Ok(1)
}

#[breaker(name = payments)]
async fn bare_name() -> Result<u32, MyError> {
    Ok(1)
}

#[breaker(crate = 5)]
async fn crate_number() -> Result<u32, MyError> {
    Ok(1)
}

#[breaker(half_open_pct = 5.5)]
async fn fractional_percent() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {}
