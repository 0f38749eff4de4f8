use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}
#[breaker(name = "")]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {}
