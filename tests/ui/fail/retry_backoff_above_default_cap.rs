use fusebox::{breaker, retry, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[retry(backoff = "10s")]
#[breaker(name = "ui-backoff_above_default_cap")]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {
    // The function still exists after the error: no "cannot find function" follows.
    let _ = lookup();
}
