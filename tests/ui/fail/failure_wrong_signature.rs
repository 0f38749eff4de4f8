use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(failure = is_failure)]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

// Takes the error by value; `failure` needs `fn(&MyError) -> bool`.
fn is_failure(_: MyError) -> bool {
    true
}

fn main() {}
