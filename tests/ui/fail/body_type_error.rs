use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

// A mistake in the body is reported in the body, as without the attribute.
#[breaker(timeout = "800ms")]
async fn lookup() -> Result<u32, MyError> {
    Ok("one")
}

#[breaker(timeout = "800ms")]
async fn parse(s: &str) -> Result<u32, MyError> {
    let n: u32 = s.parse()?;
    Ok(n)
}

fn main() {}
