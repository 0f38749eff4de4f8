use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(ignore = is_ignored, failure_rate = 50, ignore = is_ignored)]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

fn is_ignored(_: &MyError) -> bool {
    true
}

fn main() {
    let _ = lookup();
}
