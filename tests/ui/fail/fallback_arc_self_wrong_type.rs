use std::sync::Arc;

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
    // `self: Arc<Self>` lends `&self` (from a handle the call keeps only for such a fallback)
    // and then `&u32`, or `&u32` alone: a fallback taking `&u64` fits neither, and rustc
    // reports it against the shorter list, at the fallback (two mismatches; see keep.rs).
    #[breaker(fallback = Self::offline)]
    async fn get(self: Arc<Self>, id: u32) -> Result<u32, MyError> {
        Ok(id)
    }

    fn offline(&self, _id: &u64, _err: Error<MyError>) -> Result<u32, MyError> {
        Ok(0)
    }
}

fn main() {}
