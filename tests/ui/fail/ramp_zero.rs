use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

// A ramp of no time is all traffic at once: leave `ramp` out instead.
#[breaker(ramp = "0s")]
async fn lookup(id: u32) -> Result<u32, MyError> {
    Ok(id)
}

fn main() {}
