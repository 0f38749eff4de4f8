use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

// With `stale_for`, `failure_if_ok` also decides which `Ok` values are kept: still one
// error, at the path.
#[breaker(failure_if_ok = is_bad, stale_for = "1m")]
async fn lookup(id: u32) -> Result<u32, MyError> {
    Ok(id)
}

// Judges the error type; `failure_if_ok` needs `fn(&u32) -> bool`.
fn is_bad(_: &MyError) -> bool {
    true
}

fn main() {}
