use fusebox::{breaker, retry, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[retry(attempts = 2)]
#[breaker(name = "ui-retry-pattern")]
async fn get((a, b): (u32, u32)) -> Result<u32, MyError> {
    Ok(a + b)
}

fn main() {
    let _ = get((1, 2));
}
