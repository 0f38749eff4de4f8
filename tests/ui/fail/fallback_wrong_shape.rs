use fusebox::{breaker, Error, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

pub struct Order;

// Neither `fn(Error<E>) -> R` nor the call's arguments by reference then the error: the
// order is taken by value, which the call cannot lend.
#[breaker(fallback = by_value)]
async fn verify(order: &Order) -> Result<u32, MyError> {
    let _ = order;
    Ok(1)
}

fn by_value(_: Order, _: Error<MyError>) -> Result<u32, MyError> {
    Ok(0)
}

fn main() {}
