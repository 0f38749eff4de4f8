use fusebox::{breaker, bulkhead, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}
// A misspelt key that another key needs is one mistake: one error, at the misspelling.
#[breaker(slow = "1s", slow_rte = 20)]
async fn slow_rule() -> Result<u32, MyError> {
    Ok(1)
}

#[bulkhead(pol = 5)]
async fn pooled() -> Result<u32, MyError> {
    Ok(1)
}

#[breaker(ky = id, max_keys = 5)]
async fn keyed(id: u32) -> Result<u32, MyError> {
    Ok(id)
}

fn main() {}
