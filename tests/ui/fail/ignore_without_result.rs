use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(ignore = is_ignored, failure_if_ok = is_bad)]
async fn lookup() -> u32 {
    1
}

fn is_ignored(_: &MyError) -> bool {
    true
}

fn is_bad(_: &u32) -> bool {
    true
}

fn main() {}
