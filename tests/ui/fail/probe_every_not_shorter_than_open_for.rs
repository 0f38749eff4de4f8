use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

// Probes are only sent while open: an interval as long as the open period never sends one.
#[breaker(open_for = "5s", probe_every = "5s")]
async fn lookup(id: u32) -> Result<u32, MyError> {
    Ok(id)
}

fn main() {}
