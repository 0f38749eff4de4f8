// A body being typed: the one error is the user's own syntax error, not a second one from
// the attribute about what it goes on (the body is kept as tokens and still expanded).
use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[breaker(timeout = "800ms")]
async fn lookup(x: u32) -> Result<u32, MyError> {
    let y = x +;
    Ok(y)
}

fn main() {
    let _ = lookup(1);
}
