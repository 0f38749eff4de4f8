use fusebox::Rejection;

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

use fusebox::bulkhead;

#[bulkhead(size = 60)]
async fn lookup() -> Result<u32, MyError> {
    Ok(1)
}

#[bulkhead(pool = 0, max_wait = "soon")]
async fn other() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {}

#[fusebox::breaker(timeout = "1s")]
#[bulkhead(max_wait = "5ms")]
async fn combined() -> Result<u32, MyError> {
    Ok(1)
}
