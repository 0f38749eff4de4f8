// A method fallback (`Self::...`, `&self` first) returning the wrong type: one error.
use fusebox::{breaker, Error, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

pub struct Client;

impl Client {
    #[breaker(fallback = Self::cached)]
    pub async fn lookup(&self) -> Result<u32, MyError> {
        Ok(1)
    }

    fn cached(&self, _: Error<MyError>) -> Option<u32> {
        Some(0)
    }
}
fn main() {}
