use fusebox::{breaker, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

pub struct Catalog {
    tenant: u64,
}

impl Catalog {
    /// Without `stale_key`, tenant A's cached item would answer tenant B.
    #[breaker(stale_for = "10m")]
    async fn item(&self, item: u32) -> Result<String, MyError> {
        Ok(format!("{}/{item}", self.tenant))
    }
}

fn main() {}
