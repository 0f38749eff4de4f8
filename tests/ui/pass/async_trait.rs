//! Both attributes inside `#[async_trait]` impls, in either order, `Send` and `?Send`.
use async_trait::async_trait;
use fusebox::{breaker, bulkhead, Error, Rejection};

#[derive(Debug)]
pub struct MyError;

impl From<Rejection> for MyError {
    fn from(_: Rejection) -> Self {
        MyError
    }
}

#[async_trait]
pub trait Payments: Send + Sync {
    async fn verify(&self, order: &str, amount: u32) -> Result<bool, MyError>;
    async fn refund(&self, amount: u32) -> Result<(), MyError>;
}

pub struct Gateway {
    region: String,
}

impl Gateway {
    fn by_email(&self, _order: &str, _amount: &u32, _: Error<MyError>) -> Result<bool, MyError> {
        Ok(self.region.is_empty())
    }
}

#[async_trait]
impl Payments for Gateway {
    #[breaker(key = self.region, fallback = Self::by_email, stale_for = "1m", stale_key = (self.region.clone(), order.to_owned()))]
    #[bulkhead(pool = 8)]
    async fn verify(&self, order: &str, amount: u32) -> Result<bool, MyError> {
        Ok(order.len() as u32 == amount)
    }

    #[bulkhead(pool = 2)]
    #[breaker(timeout = "1s")]
    async fn refund(&self, amount: u32) -> Result<(), MyError> {
        let _ = amount;
        Ok(())
    }
}

#[async_trait(?Send)]
pub trait Local {
    async fn get(&self) -> Result<u32, MyError>;
}

#[async_trait(?Send)]
impl Local for std::rc::Rc<u32> {
    #[breaker]
    async fn get(&self) -> Result<u32, MyError> {
        Ok(**self)
    }
}

fn main() {
    let gateway: Box<dyn Payments> = Box::new(Gateway { region: "eu".into() });
    let _ = gateway.verify("o", 1);
    let _ = gateway.refund(1);
    let _ = std::rc::Rc::new(1).get();
}
