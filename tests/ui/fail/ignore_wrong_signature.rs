use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(ignore = is_ignored)]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

// Takes the error by value; `ignore` needs `fn(&MyError) -> bool`.
fn is_ignored(_: MyError) -> bool {
    true
}

fn main() {}
