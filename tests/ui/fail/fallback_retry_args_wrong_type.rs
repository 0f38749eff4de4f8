use fusebox::{breaker, retry, Error, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[derive(Clone)]
pub struct Order;

// Under `#[retry]` every argument is lent, `order` too (the retry keeps it to clone from):
// `(&Order, &u32)`, or `(&u32,)` as without a retry. `&u64` fits neither, and the error names both.
#[breaker(fallback = cached)]
#[retry(attempts = 3)]
async fn quote(order: Order, qty: u32) -> Result<u32, MyError> {
    let _ = order;
    Ok(qty)
}

fn cached(_order: &Order, _qty: &u64, _err: Error<MyError>) -> Result<u32, MyError> {
    Ok(0)
}

fn main() {}
