//! The fallback answers once, after the retries, and may borrow every argument, those taken
//! by value too (the retry keeps them to clone from).

use super::*;

static FALLBACK_CALLS: AtomicU32 = AtomicU32::new(0);
static WITH_FALLBACK: AtomicU32 = AtomicU32::new(0);

fn cached(_: fusebox::Error<DepError>) -> Result<u32, DepError> {
    FALLBACK_CALLS.fetch_add(1, Relaxed);
    Ok(0)
}

#[breaker(name = "rt-fallback", fallback = cached)]
#[retry(attempts = 3, backoff = "1ms")]
async fn with_fallback() -> Result<u32, DepError> {
    WITH_FALLBACK.fetch_add(1, Relaxed);
    Err(DepError::Down)
}

#[tokio::test(start_paused = true)]
async fn the_fallback_answers_once_after_the_retries() {
    assert_eq!(with_fallback().await.unwrap(), 0);
    assert_eq!(WITH_FALLBACK.load(Relaxed), 3);
    assert_eq!(FALLBACK_CALLS.load(Relaxed), 1);
}

/// Under `#[retry]` the by-value arguments are cloned for each attempt, so the originals are
/// still there for the fallback: it may take them by reference (DESIGN.md's
/// `fn(&Order, Error<E>)`), or only the ones a call without a retry lends.
#[derive(Debug, Clone, PartialEq)]
struct Order {
    id: u32,
    sku: String,
}

fn order(id: u32) -> Order {
    Order {
        id,
        sku: format!("sku-{id}"),
    }
}

fn by_order(
    order: &Order,
    tag: &String,
    qty: &u32,
    err: fusebox::Error<DepError>,
) -> Result<u32, DepError> {
    assert!(
        matches!(err, fusebox::Error::Failed(DepError::Down)),
        "{err:?}"
    );
    assert_eq!(tag, "gold");
    assert_eq!(
        order.sku, "sku-7",
        "the original, not a clone the attempt consumed"
    );
    Ok(order.id * 1000 + qty)
}

#[breaker(name = "rt-lend-every", fallback = by_order)]
#[retry(attempts = 2, backoff = "1ms")]
async fn lend_every(order: Order, tag: String, qty: u32) -> Result<u32, DepError> {
    drop((order, tag, qty));
    Err(DepError::Down)
}

/// Written for the list a call without a retry lends (`qty` only): still fits.
fn by_qty(qty: &u32, _: fusebox::Error<DepError>) -> Result<u32, DepError> {
    Ok(*qty)
}

#[retry(attempts = 2, backoff = "1ms")]
#[breaker(name = "rt-lend-strict", fallback = by_qty)]
async fn lend_strict(order: Order, qty: u32) -> Result<u32, DepError> {
    drop(order);
    let _ = qty;
    Err(DepError::Down)
}

#[breaker(name = "rt-lend-closure", fallback = |o: &Order, _: fusebox::Error<DepError>| Ok(o.id))]
#[retry(attempts = 2, backoff = "1ms")]
async fn lend_closure(o: Order) -> Result<u32, DepError> {
    drop(o);
    Err(DepError::Down)
}

struct Shop {
    prefix: u32,
}

impl Shop {
    async fn by_order(
        &self,
        order: &Order,
        err: fusebox::Error<DepError>,
    ) -> Result<u32, DepError> {
        assert!(matches!(err, fusebox::Error::Failed(_)));
        Ok(self.prefix + order.id)
    }

    #[breaker(name = "rt-lend-method", fallback = Self::by_order)]
    #[retry(attempts = 2, backoff = "1ms")]
    async fn verify(&self, order: Order) -> Result<u32, DepError> {
        drop(order);
        Err(DepError::Down)
    }
}

/// `self: &Arc<Self>` is a shared reference like `&self`: retried, and lent to the fallback
/// as `&Self`.
struct Pool {
    attempts: AtomicU32,
}

impl Pool {
    #[retry(attempts = 3, backoff = "1ms")]
    #[breaker(name = "rt-ref-arc", fallback = Self::spare)]
    async fn lease(self: &std::sync::Arc<Self>, who: Order) -> Result<u32, DepError> {
        self.attempts.fetch_add(1, Relaxed);
        drop(who);
        Err(DepError::Down)
    }

    fn spare(&self, who: &Order, _: fusebox::Error<DepError>) -> Result<u32, DepError> {
        Ok(self.attempts.load(Relaxed) * 10 + who.id)
    }
}

/// A `#[cfg]`'d by-value argument is lent only as a call without a retry would (not at all):
/// compiled out, it would leave two equal lists and a fallback no way to say which it took.
#[retry(attempts = 2, backoff = "1ms")]
#[breaker(name = "rt-lend-cfg", fallback = by_qty)]
async fn lend_cfg(#[cfg(any())] order: Order, qty: u32) -> Result<u32, DepError> {
    let _ = qty;
    Err(DepError::Down)
}

#[tokio::test(start_paused = true)]
async fn a_retried_fallback_borrows_the_arguments_taken_by_value() {
    assert_eq!(lend_every(order(7), "gold".into(), 3).await, Ok(7003));
    assert_eq!(lend_strict(order(7), 5).await, Ok(5));
    assert_eq!(lend_cfg(6).await, Ok(6));
    assert_eq!(lend_closure(order(9)).await, Ok(9));
    let pool = std::sync::Arc::new(Pool {
        attempts: AtomicU32::new(0),
    });
    assert_eq!(
        pool.lease(order(2)).await,
        Ok(32),
        "three attempts, then `&self` and `&who`"
    );
    let shop = Shop { prefix: 100 };
    assert_eq!(shop.verify(order(4)).await, Ok(104));
    let m = fusebox::metrics();
    assert_eq!(
        m.retry("rt-lend-every").unwrap().retries,
        1,
        "both attempts ran"
    );
}
