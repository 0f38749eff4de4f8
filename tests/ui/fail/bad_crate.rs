//! `crate = ".."` naming a path where fusebox is not: one error each, at the path written.
use fusebox::{breaker, bulkhead, retry, Error, Rejection};

#[derive(Debug, Clone)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(crate = "nonexistent", name = "bad-crate", timeout = "1s")]
async fn misspelt() -> Result<u32, MyError> {
    Ok(1)
}

// Everything the expansion generates (a key, stale values, a fallback, a bulkhead, retries)
// goes through the one path.
#[retry(attempts = 2)]
#[breaker(crate = "nonexistent::fusebox", key = id, stale_for = "1m", fallback = offline)]
#[bulkhead(pool = 2)]
async fn composed(id: u32) -> Result<u32, MyError> {
    Ok(id)
}

fn offline(_: Error<MyError>) -> Result<u32, MyError> {
    Ok(0)
}

#[bulkhead(crate = nonexistent, pool = 2)]
async fn bare_path() -> Result<u32, MyError> {
    Ok(1)
}

// A crate that is there but is not fusebox.
#[breaker(crate = "std")]
async fn not_fusebox() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {
    let _ = (misspelt(), composed(1), bare_path(), not_fusebox());
}
