use fusebox::{breaker, retry, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

/// Not `Clone`: an attempt cannot get its own copy.
pub struct Ticket(u32);

#[retry(attempts = 2)]
#[breaker(name = "ui-not-clone")]
async fn redeem(t: Ticket) -> Result<u32, MyError> {
    Ok(t.0)
}

fn main() {
    let _ = redeem(Ticket(1));
}
