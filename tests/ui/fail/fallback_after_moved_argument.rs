use std::fmt::Display;

use fusebox::{breaker, Error, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

// `id` is moved into the call, so the fallback cannot see it; it must not be handed `&up`
// in its place.
#[breaker(fallback = offline)]
async fn describe<T: Display>(id: T, up: bool) -> Result<String, MyError> {
    if up {
        Ok(id.to_string())
    } else {
        Err(MyError)
    }
}

fn offline<T: Display>(id: &T, _: Error<MyError>) -> Result<String, MyError> {
    Ok(format!("offline {id}"))
}

fn main() {}
