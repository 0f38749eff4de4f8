//! Fallbacks that see the call: the arguments by reference before the error, sync or async,
//! `&self` first for methods, as resilience4j's fallback methods take the call's parameters.

mod common;

use std::time::Duration;

use common::DepError;
use fusebox::{breaker, registry, Error, Rejection};

#[derive(Debug, Clone, PartialEq)]
pub struct Order {
    id: u32,
    email: &'static str,
}

#[derive(Debug, PartialEq)]
pub enum Verification {
    Verified,
    WillConfirmByEmail { order: u32, to: &'static str },
}

#[breaker(name = "fa-payments", timeout = "3s", fallback = confirm_by_email)]
async fn verify_payment(order: &Order) -> Result<Verification, DepError> {
    tokio::time::sleep(Duration::from_secs(if order.id == 0 { 10 } else { 0 })).await;
    Ok(Verification::Verified)
}

/// "We'll confirm by email" needs the order to send the email.
fn confirm_by_email(order: &Order, err: Error<DepError>) -> Result<Verification, DepError> {
    assert!(matches!(err, Error::Rejected(_)));
    Ok(Verification::WillConfirmByEmail {
        order: order.id,
        to: order.email,
    })
}

#[tokio::test(start_paused = true)]
async fn a_sync_fallback_gets_the_order_and_the_error() {
    let order = Order {
        id: 0,
        email: "a@example.com",
    };
    // Times out after 3 s: the fallback answers, with the order in hand.
    assert_eq!(
        verify_payment(&order).await,
        Ok(Verification::WillConfirmByEmail {
            order: 0,
            to: "a@example.com"
        })
    );
    let ok = Order { id: 1, ..order };
    assert_eq!(verify_payment(&ok).await, Ok(Verification::Verified));
}

#[breaker(name = "fa-quote", fallback = cached_quote)]
async fn quote(region: &str, qty: u32) -> Result<String, DepError> {
    Err(DepError::Down)
}

async fn cached_quote(region: &str, qty: &u32, err: Error<DepError>) -> Result<String, DepError> {
    tokio::task::yield_now().await;
    let why = match err {
        Error::Failed(DepError::Down) => "down",
        _ => "other",
    };
    Ok(format!("{region}:{qty}:{why}"))
}

#[tokio::test(start_paused = true)]
async fn an_async_fallback_gets_references_and_numbers_by_reference() {
    assert_eq!(quote("eu", 3).await, Ok("eu:3:down".into()));
}

pub struct Client {
    base: &'static str,
}

impl Client {
    #[breaker(name = "fa-client", fallback = Self::offline)]
    pub async fn get(&self, path: &str) -> Result<String, DepError> {
        Ok(format!("{}{path}", self.base))
    }

    fn offline(&self, path: &str, err: Error<DepError>) -> Result<String, DepError> {
        let open = matches!(err, Error::Rejected(Rejection::Open { .. }));
        Ok(format!("offline {}{path} open={open}", self.base))
    }

    // An owned argument is moved into the call: a fallback of the error alone still works.
    #[breaker(name = "fa-client-owned", fallback = Self::gone)]
    pub async fn put(&self, body: String) -> Result<usize, DepError> {
        Ok(body.len())
    }

    fn gone(&self, _: Error<DepError>) -> Result<usize, DepError> {
        Ok(0)
    }
}

#[tokio::test(start_paused = true)]
async fn a_method_fallback_gets_self_first() {
    let c = Client { base: "https://x/" };
    assert_eq!(c.get("a").await, Ok("https://x/a".into()));
    registry().breaker("fa-client").unwrap().force_open();
    assert_eq!(c.get("b").await, Ok("offline https://x/b open=true".into()));
    registry().breaker("fa-client-owned").unwrap().force_open();
    assert_eq!(c.put("four".into()).await, Ok(0));
}

#[breaker(name = "fa-closure", fallback = |id: &u64, _e| Ok(*id * 10))]
async fn closure_with_args(id: u64) -> Result<u64, DepError> {
    Err(DepError::Down)
}

#[tokio::test(start_paused = true)]
async fn a_closure_fallback_may_take_the_arguments_too() {
    assert_eq!(closure_with_args(4).await, Ok(40));
}

/// A client shared as `Arc<Self>` (to spawn its calls): the call keeps a clone of the handle,
/// so the fallback may take `&self` as a `&self` method's does, or skip it.
pub struct Shared {
    base: &'static str,
}

impl Shared {
    #[breaker(name = "fa-arc", fallback = Self::offline)]
    pub async fn get(self: std::sync::Arc<Self>, id: u32) -> Result<String, DepError> {
        tokio::task::yield_now().await;
        Ok(format!("{}{id}", self.base))
    }

    fn offline(&self, id: &u32, err: Error<DepError>) -> Result<String, DepError> {
        let open = matches!(err, Error::Rejected(Rejection::Open { .. }));
        Ok(format!("offline {}{id} open={open}", self.base))
    }

    #[breaker(name = "fa-arc-no-self", fallback = Self::without_self)]
    pub async fn count(self: std::rc::Rc<Self>, id: u32) -> Result<u32, DepError> {
        drop((self, id));
        Err(DepError::Down)
    }

    /// Written without `self`: the shorter list still fits.
    fn without_self(id: &u32, _: Error<DepError>) -> Result<u32, DepError> {
        Ok(*id + 1)
    }

    #[breaker(name = "fa-arc-closure", fallback = |this: &Shared, _: Error<DepError>| Ok(this.base.len()))]
    pub async fn len(self: std::sync::Arc<Self>) -> Result<usize, DepError> {
        drop(self);
        Err(DepError::Down)
    }
}

/// A connection closed through its last handle: the body unwraps `self`, which only works if
/// the call kept no second handle, as it keeps none for a fallback that does not take `&self`.
pub struct Conn {
    open: std::sync::atomic::AtomicBool,
}

impl Conn {
    #[breaker(name = "fa-arc-unique", fallback = Self::gone)]
    pub async fn close(self: std::sync::Arc<Self>) -> Result<&'static str, DepError> {
        match std::sync::Arc::try_unwrap(self) {
            Ok(_) => Ok("closed"),
            Err(_) => Ok("still shared"),
        }
    }

    fn gone(_: Error<DepError>) -> Result<&'static str, DepError> {
        Ok("gone")
    }

    /// An async fallback of `&self`: its future borrows the kept handle.
    #[breaker(name = "fa-arc-async", fallback = Self::reopen)]
    pub async fn ping(self: std::sync::Arc<Self>) -> Result<bool, DepError> {
        drop(self);
        Err(DepError::Down)
    }

    async fn reopen(&self, _: Error<DepError>) -> Result<bool, DepError> {
        tokio::task::yield_now().await;
        Ok(self.open.load(std::sync::atomic::Ordering::SeqCst))
    }
}

#[tokio::test(start_paused = true)]
async fn an_arc_self_method_keeps_no_handle_its_fallback_does_not_take() {
    let conn = || {
        std::sync::Arc::new(Conn {
            open: std::sync::atomic::AtomicBool::new(true),
        })
    };
    assert_eq!(conn().close().await, Ok("closed"));
    assert_eq!(tokio::spawn(conn().ping()).await.unwrap(), Ok(true));
}

#[tokio::test(start_paused = true)]
async fn an_arc_self_method_lends_self_to_its_fallback() {
    let s = std::sync::Arc::new(Shared { base: "https://y/" });
    assert_eq!(s.clone().get(1).await, Ok("https://y/1".into()));
    registry().breaker("fa-arc").unwrap().force_open();
    assert_eq!(
        s.clone().get(2).await,
        Ok("offline https://y/2 open=true".into())
    );
    // Spawned: the kept clone is a second handle, so the call owns what it needs.
    let spawned = tokio::spawn(s.clone().get(3)).await.unwrap();
    assert_eq!(spawned, Ok("offline https://y/3 open=true".into()));
    assert_eq!(s.clone().len().await, Ok(10));
    assert_eq!(
        std::sync::Arc::strong_count(&s),
        1,
        "the kept clone is dropped with the call"
    );
    let r = std::rc::Rc::new(Shared { base: "z" });
    assert_eq!(r.clone().count(7).await, Ok(8));
}

/// Behind `dyn Trait` (async-trait's boxed future), `self: Arc<Self>` lends `&self` as well.
#[async_trait::async_trait]
pub trait Catalog: Send + Sync {
    async fn price(self: std::sync::Arc<Self>, sku: u32) -> Result<u32, DepError>;
}

#[async_trait::async_trait]
impl Catalog for Shared {
    #[breaker(name = "fa-arc-dyn", fallback = Self::list_price)]
    async fn price(self: std::sync::Arc<Self>, sku: u32) -> Result<u32, DepError> {
        drop((self, sku));
        Err(DepError::Down)
    }
}

impl Shared {
    fn list_price(&self, sku: &u32, _: Error<DepError>) -> Result<u32, DepError> {
        Ok(self.base.len() as u32 * 100 + sku)
    }
}

#[tokio::test(start_paused = true)]
async fn an_arc_self_method_behind_dyn_lends_self_too() {
    let s = std::sync::Arc::new(Shared { base: "ab" });
    let c: std::sync::Arc<dyn Catalog> = s.clone();
    assert_eq!(c.price(7).await, Ok(207));
    assert_eq!(std::sync::Arc::strong_count(&s), 1);
}

/// `self: &Arc<Self>` (a method that may clone its handle to spawn): lent as it is, and as
/// the `&Self` it points to, so a fallback may take either.
pub struct Spawner {
    name: &'static str,
}

impl Spawner {
    #[breaker(name = "fa-ref-arc", fallback = Self::by_self)]
    pub async fn run(self: &std::sync::Arc<Self>, n: u32) -> Result<String, DepError> {
        let _ = (std::sync::Arc::clone(self), n);
        Err(DepError::Down)
    }

    fn by_self(&self, n: &u32, _: Error<DepError>) -> Result<String, DepError> {
        Ok(format!("{} {n}", self.name))
    }

    #[breaker(name = "fa-ref-arc-handle", fallback = Self::by_handle)]
    pub async fn run_handle(self: &std::sync::Arc<Self>) -> Result<usize, DepError> {
        Err(DepError::Down)
    }

    /// The receiver's own type: what a fallback written like the method takes.
    fn by_handle(self: &std::sync::Arc<Self>, _: Error<DepError>) -> Result<usize, DepError> {
        Ok(std::sync::Arc::strong_count(self))
    }
}

impl Spawner {
    /// A closure tells the two apart by its first parameter's type.
    #[breaker(name = "fa-ref-arc-closure-self", fallback = |s: &Spawner, _: Error<DepError>| Ok(s.name.len()))]
    pub async fn closure_self(self: &std::sync::Arc<Self>) -> Result<usize, DepError> {
        Err(DepError::Down)
    }

    #[breaker(name = "fa-ref-arc-closure-handle", fallback = |s: &std::sync::Arc<Spawner>, _: Error<DepError>| Ok(std::sync::Arc::strong_count(s)))]
    pub async fn closure_handle(self: &std::sync::Arc<Self>) -> Result<usize, DepError> {
        Err(DepError::Down)
    }
}

#[tokio::test(start_paused = true)]
async fn a_ref_arc_self_method_lends_self_either_way() {
    let s = std::sync::Arc::new(Spawner { name: "w" });
    assert_eq!(s.run(5).await, Ok("w 5".into()));
    assert_eq!(s.run_handle().await, Ok(1));
    assert_eq!(s.closure_self().await, Ok(1));
    let other = std::sync::Arc::clone(&s);
    assert_eq!(other.closure_handle().await, Ok(2));
}

/// Something only the handle can do: a fallback generic in it gets the receiver as written.
pub trait Handles {
    fn handles(&self) -> usize;
}

impl<T> Handles for std::sync::Arc<T> {
    fn handles(&self) -> usize {
        std::sync::Arc::strong_count(self)
    }
}

fn count_handles<C: Handles>(c: &C, n: &u32, _: Error<DepError>) -> Result<usize, DepError> {
    Ok(c.handles() * 100 + *n as usize)
}

impl Spawner {
    /// Generic in its first parameter, bounded by what only `&Arc<Self>` has: called with the
    /// receiver as written, as a fallback of a `self: &Arc<Self>` method always was.
    #[breaker(name = "fa-ref-arc-generic", fallback = count_handles)]
    pub async fn generic(self: &std::sync::Arc<Self>, n: u32) -> Result<usize, DepError> {
        let _ = n;
        Err(DepError::Down)
    }
}

#[tokio::test(start_paused = true)]
async fn a_generic_fallback_of_a_ref_arc_method_gets_the_receiver_as_written() {
    let s = std::sync::Arc::new(Spawner { name: "g" });
    assert_eq!(s.generic(7).await, Ok(107));
}
