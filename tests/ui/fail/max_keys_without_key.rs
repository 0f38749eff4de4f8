use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

// `max_keys` bounds the breakers of a keyed name; without `key` there is only one.
#[breaker(max_keys = 100)]
async fn unkeyed(id: u32) -> Result<u32, MyError> {
    Ok(id)
}

fn main() {}
