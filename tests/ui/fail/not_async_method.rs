// A method that is not async, outside async-trait: one error, and none about `u32`.
use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

pub struct Db;

impl Db {
    #[breaker(timeout = "1s")]
    pub fn load(&self) -> u32 {
        1
    }
}

fn main() {}
