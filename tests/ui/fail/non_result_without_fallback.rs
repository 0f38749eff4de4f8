use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(timeout = "800ms")]
async fn lookup() -> String {
    String::new()
}

fn main() {}
