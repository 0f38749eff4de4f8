use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

/// Takes the value, not the `fusebox::Stale<T>` with its age.
fn annotate(value: u32, _: fusebox::Error<MyError>) -> Result<u32, MyError> {
    Ok(value)
}

#[breaker(stale_for = "10m", stale_fallback = annotate)]
async fn lookup(id: u32) -> Result<u32, MyError> {
    Ok(id)
}

#[breaker(stale_for = "10m", stale_fallback = annotate(1))]
async fn called(id: u32) -> Result<u32, MyError> {
    Ok(id)
}

fn main() {}
