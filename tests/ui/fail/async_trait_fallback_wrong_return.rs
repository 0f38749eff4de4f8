// In an `#[async_trait]` impl, a fallback of the wrong type: one error, at the path.
use fusebox::{breaker, Error, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

use async_trait::async_trait;

#[async_trait]
pub trait Store {
    async fn load(&self, id: u32) -> Result<u32, MyError>;
}

pub struct Db;

fn cached(_: Error<MyError>) -> Option<u32> {
    Some(0)
}

#[async_trait]
impl Store for Db {
    #[breaker(fallback = cached)]
    async fn load(&self, id: u32) -> Result<u32, MyError> {
        Ok(id)
    }
}
fn main() {}
