use fusebox::{breaker, retry, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

fn is_failure(_: &MyError) -> bool {
    true
}

// A function's name in quotes, as `name = "..."` is written: each gets one error at the
// string, saying to write the path.
#[breaker(failure = "is_failure")]
async fn quoted_failure() -> Result<u32, MyError> {
    Ok(1)
}

#[breaker(ignore = "is_failure")]
async fn quoted_ignore() -> Result<u32, MyError> {
    Ok(1)
}

#[breaker(failure_if_ok = "is_bad")]
async fn quoted_failure_if_ok() -> Result<u32, MyError> {
    Ok(1)
}

#[retry(attempts = 3, retry_on = "is_failure")]
async fn quoted_retry_on() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {
    let _ = is_failure;
}
