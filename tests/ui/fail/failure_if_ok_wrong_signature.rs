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

// Judges the error type; `failure_if_ok` needs `fn(&u32) -> bool`.
fn is_bad(_: &MyError) -> bool {
    true
}

fn main() {}
