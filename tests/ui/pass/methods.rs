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

pub struct Client {
    base: String,
    calls: u32,
}

impl Client {
    #[breaker(timeout = "800ms")]
    pub async fn get(&self, path: &str) -> Result<String, MyError> {
        Ok(format!("{}{path}", self.base))
    }

    #[breaker(name = "client-mut")]
    pub async fn bump(&mut self) -> Result<u32, MyError> {
        self.calls += 1;
        Ok(self.calls)
    }

    #[breaker(name = "client-owned", fallback = Self::gone)]
    pub async fn into_base(self) -> Result<String, MyError> {
        Ok(self.base)
    }

    fn gone(_: Error<MyError>) -> Result<String, MyError> {
        Ok(String::new())
    }

    #[breaker(name = "client-assoc")]
    pub async fn ping() -> Result<(), MyError> {
        Ok(())
    }
}

pub trait Store {
    fn load(&self, id: u32) -> impl std::future::Future<Output = Result<u32, MyError>> + Send;
}

impl Store for Client {
    #[breaker(name = "store-load", failure = not_found_is_ok)]
    async fn load(&self, id: u32) -> Result<u32, MyError> {
        if id == 0 {
            return Err(MyError::NotFound);
        }
        Ok(id + self.calls)
    }
}

fn not_found_is_ok(e: &MyError) -> bool {
    !matches!(e, MyError::NotFound)
}

fn main() {
    let mut c = Client { base: "x".into(), calls: 0 };
    let _ = c.get("/a");
    let _ = c.bump();
    let _ = c.load(1);
    let _ = Client::ping();
    let _ = c.into_base();
}
