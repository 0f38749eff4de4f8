use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

pub struct Shard(u32);

#[breaker(name = "cache", key = shard)]
async fn get(shard: Shard) -> Result<u32, MyError> {
    Ok(shard.0)
}

fn main() {}
