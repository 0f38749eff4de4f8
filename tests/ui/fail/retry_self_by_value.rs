use fusebox::{breaker, retry, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

struct Client;

impl Client {
    #[retry(attempts = 2)]
    #[breaker(name = "ui-retry-self-value")]
    async fn get(self) -> Result<u32, MyError> {
        Ok(1)
    }
}

fn main() {
    let _ = Client.get();
}
