use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

// `search/eu` is the name of the key `eu` of a breaker keyed under `search`.
#[breaker(name = "search/eu")]
async fn search_eu() -> Result<u32, MyError> {
    Ok(1)
}

fn main() {}
