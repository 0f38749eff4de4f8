use fusebox::{breaker, retry, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[retry(attempts = 2)]
#[breaker(name = "ui-mut-ref")]
async fn fill(buf: &mut Vec<u8>) -> Result<u32, MyError> {
    buf.push(1);
    Ok(1)
}

fn main() {
    let mut v = Vec::new();
    let _ = fill(&mut v);
}
