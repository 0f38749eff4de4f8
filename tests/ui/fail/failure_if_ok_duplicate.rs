use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(failure_if_ok = is_bad)]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

fn is_bad(_: &u32) -> bool {
    true
}

// Given twice: the second is refused at its key.
#[breaker(failure_if_ok = is_bad, failure_if_ok = is_bad)]
async fn again() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {
    let _ = (lookup(), again());
}
