use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

/// Clone and Eq, but not Hash.
#[derive(Clone, PartialEq, Eq)]
pub struct Region(String);

/// Clone and Hash, but only PartialEq.
#[derive(Clone, Hash, PartialEq)]
pub struct Price(u64);

/// Hash and Eq, but not Clone.
#[derive(Hash, PartialEq, Eq)]
pub struct Token(u64);

#[breaker(stale_for = "10m")]
async fn by_region(id: u32, region: Region) -> Result<u32, MyError> {
    let _ = region;
    Ok(id)
}

#[breaker(stale_for = "10m")]
async fn by_price(price: Price) -> Result<u64, MyError> {
    Ok(price.0)
}

#[breaker(stale_for = "10m")]
async fn by_token(token: &Token) -> Result<u64, MyError> {
    Ok(token.0)
}

fn main() {}
