use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

/// Not Clone: a last good value could not be served twice.
pub struct Report(String);

#[breaker(stale_for = "10m")]
async fn report(id: u32) -> Result<Report, MyError> {
    Ok(Report(id.to_string()))
}

fn main() {}
