use fusebox::{breaker, Error, Rejection};

#[derive(Debug)]
pub enum MyError {
    NotFound,
    Unavailable(Rejection),
}

impl From<Rejection> for MyError {
    fn from(r: Rejection) -> Self {
        MyError::Unavailable(r)
    }
}

#[derive(Debug)]
pub enum Verification {
    Verified,
    WillConfirmByEmail,
}

#[breaker(name = "sync-fallback", fallback = by_email)]
async fn verify(amount: u32) -> Result<Verification, MyError> {
    let _ = amount;
    Ok(Verification::Verified)
}

fn by_email(_: Error<MyError>) -> Result<Verification, MyError> {
    Ok(Verification::WillConfirmByEmail)
}

#[breaker(name = "async-fallback", fallback = from_replica)]
async fn read(id: u32) -> Result<u32, MyError> {
    Ok(id)
}

async fn from_replica(_: Error<MyError>) -> Result<u32, MyError> {
    Ok(0)
}

#[breaker(name = "closure-fallback", fallback = |_| Ok(Vec::new()))]
async fn list() -> Result<Vec<u32>, MyError> {
    Ok(vec![1])
}

/// Not a `Result`: allowed with a fallback, which gets `Error<Infallible>`.
#[breaker(name = "plain-value", timeout = "100ms", fallback = unknown_address)]
async fn address(id: u32) -> String {
    format!("{id} Main St")
}

fn unknown_address(_: Error<std::convert::Infallible>) -> String {
    "address unavailable".to_owned()
}

/// An error type without `From<Rejection>` is fine when a fallback answers.
#[derive(Debug)]
pub struct Plain;

#[breaker(name = "plain-error", fallback = plain)]
async fn plain_error() -> Result<u8, Plain> {
    Err(Plain)
}

fn plain(_: Error<Plain>) -> Result<u8, Plain> {
    Ok(0)
}

#[breaker(name = "closure-failure", failure = |e: &MyError| !matches!(e, MyError::NotFound))]
async fn find(id: u32) -> Result<u32, MyError> {
    if id == 0 {
        Err(MyError::NotFound)
    } else {
        Ok(id)
    }
}

fn main() {
    let _ = find(1);
    let _ = verify(1);
    let _ = read(1);
    let _ = list();
    let _ = address(1);
    let _ = plain_error();
}
