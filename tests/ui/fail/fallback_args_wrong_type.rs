use fusebox::{breaker, Error, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

// `qty` is lent as `&u32`: a fallback taking `&u64` does not fit, and the error says so at it.
#[breaker(fallback = cached)]
async fn quote(region: &str, qty: u32) -> Result<u32, MyError> {
    Ok(region.len() as u32 * qty)
}

fn cached(_region: &str, _qty: &u64, _err: Error<MyError>) -> Result<u32, MyError> {
    Ok(0)
}

fn main() {}
