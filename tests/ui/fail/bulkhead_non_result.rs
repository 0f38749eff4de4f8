use fusebox::Rejection;

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

use fusebox::bulkhead;

#[bulkhead(pool = 4)]
async fn lookup() -> u32 {
    1
}

fn main() {}
