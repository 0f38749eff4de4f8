//! `#[retry]` alone and composed with `#[breaker]` and `#[bulkhead]`, on a paused clock.

mod common;

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::time::Duration;

use common::DepError;
use fusebox::{breaker, bulkhead, registry, retry, Rejection};

/// Fails while `n` (the attempt's number, from 1) is below `ok_from`.
fn outcome(n: u32, ok_from: u32) -> Result<u32, DepError> {
    if n < ok_from {
        Err(DepError::Down)
    } else {
        Ok(n)
    }
}

static FLAKY: AtomicU32 = AtomicU32::new(0);

/// By-value `String`: cloned for each attempt, so every attempt sees it whole.
#[retry(attempts = 3, backoff = "10ms")]
#[breaker(name = "rt-flaky")]
async fn flaky(label: String) -> Result<u32, DepError> {
    let n = FLAKY.fetch_add(1, Relaxed) + 1;
    assert_eq!(
        label, "order-7",
        "each attempt gets its own copy of the argument"
    );
    drop(label);
    outcome(n, 3)
}

#[tokio::test(start_paused = true)]
async fn a_failing_fn_is_retried_until_it_succeeds() {
    assert_eq!(flaky("order-7".to_owned()).await.unwrap(), 3);
    assert_eq!(FLAKY.load(Relaxed), 3);
    let b = registry().breaker("rt-flaky").unwrap();
    assert_eq!(b.metrics().failed, 2, "each attempt is a call of its own");
    let m = fusebox::metrics();
    let r = m.retry("rt-flaky").unwrap();
    assert_eq!((r.calls, r.retries), (1, 2));
}

static OPEN_A: AtomicU32 = AtomicU32::new(0);
static OPEN_B: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 5, backoff = "1ms")]
#[breaker(name = "rt-open-a")]
async fn open_retry_first() -> Result<u32, DepError> {
    OPEN_A.fetch_add(1, Relaxed);
    Err(DepError::Down)
}

// The other order: the breaker written first, with the same meaning.
#[breaker(name = "rt-open-b")]
#[retry(attempts = 5, backoff = "1ms")]
async fn open_breaker_first() -> Result<u32, DepError> {
    OPEN_B.fetch_add(1, Relaxed);
    Err(DepError::Down)
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_is_never_retried_in_either_order() {
    for (name, calls) in [("rt-open-a", &OPEN_A), ("rt-open-b", &OPEN_B)] {
        let call = || async {
            if name == "rt-open-a" {
                open_retry_first().await
            } else {
                open_breaker_first().await
            }
        };
        // Closed: every attempt runs, and the breaker counts each.
        assert!(matches!(call().await, Err(DepError::Down)));
        assert_eq!(calls.load(Relaxed), 5, "{name}: five attempts");
        let b = registry().breaker(name).unwrap();
        assert_eq!(
            b.metrics().failed,
            5,
            "{name}: the breaker saw each attempt"
        );
        b.force_open();
        let r = call().await;
        assert!(
            matches!(r, Err(DepError::Unavailable(Rejection::Open { .. }))),
            "{name}: {r:?}"
        );
        assert_eq!(
            calls.load(Relaxed),
            5,
            "{name}: no attempt into an open breaker"
        );
        let m = fusebox::metrics();
        assert_eq!(
            m.retry(name).unwrap().retries,
            4,
            "{name}: no retry of the refusal"
        );
    }
}

static SLOW: AtomicU32 = AtomicU32::new(0);
static SLOW_IDEM: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 3, backoff = "1ms")]
#[breaker(name = "rt-timeout", timeout = "100ms")]
async fn slow_payment() -> Result<u32, DepError> {
    SLOW.fetch_add(1, Relaxed);
    tokio::time::sleep(Duration::from_secs(1)).await;
    Ok(1)
}

#[retry(attempts = 3, backoff = "1ms", idempotent)]
#[breaker(name = "rt-timeout-idem", timeout = "100ms")]
async fn slow_read() -> Result<u32, DepError> {
    let n = SLOW_IDEM.fetch_add(1, Relaxed) + 1;
    if n < 3 {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    Ok(n)
}

#[tokio::test(start_paused = true)]
async fn a_timeout_is_retried_only_when_idempotent() {
    let r = slow_payment().await;
    assert!(
        matches!(r, Err(DepError::Unavailable(Rejection::TimedOut { .. }))),
        "{r:?}"
    );
    assert_eq!(SLOW.load(Relaxed), 1, "a payment may have gone through");
    assert_eq!(slow_read().await.unwrap(), 3);
    assert_eq!(SLOW_IDEM.load(Relaxed), 3);
}

static BROKE: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 3, backoff = "1ms", budget = 0, budget_floor = 0)]
#[breaker(name = "rt-budget")]
async fn no_budget() -> Result<u32, DepError> {
    BROKE.fetch_add(1, Relaxed);
    Err(DepError::Down)
}

#[tokio::test(start_paused = true)]
async fn budget_refusals_show_in_metrics() {
    for _ in 0..4 {
        assert!(matches!(no_budget().await, Err(DepError::Down)));
    }
    assert_eq!(BROKE.load(Relaxed), 4, "no budget, no retry");
    let m = fusebox::metrics();
    let r = m.retry("rt-budget").unwrap();
    assert_eq!((r.calls, r.retries, r.budget_exhausted), (4, 0, 4));
}

static ALONE: AtomicU32 = AtomicU32::new(0);

/// Alone, every `Err` of the body is retried; a reference argument is copied.
#[retry(attempts = 4, backoff = "5ms")]
async fn alone(what: &str) -> Result<String, String> {
    let n = ALONE.fetch_add(1, Relaxed) + 1;
    if n < 4 {
        return Err(format!("{what} failed"));
    }
    Ok(format!("{what} #{n}"))
}

#[tokio::test(start_paused = true)]
async fn alone_it_retries_the_fns_errors() {
    assert_eq!(alone("fetch").await.unwrap(), "fetch #4");
}

static NOT_FOUND: AtomicU32 = AtomicU32::new(0);

fn counts(e: &DepError) -> bool {
    !matches!(e, DepError::NotFound)
}

/// What the breaker does not count is not retried either, by default.
#[retry(attempts = 3, backoff = "1ms")]
#[breaker(name = "rt-ignored", failure = counts)]
async fn lookup() -> Result<u32, DepError> {
    NOT_FOUND.fetch_add(1, Relaxed);
    Err(DepError::NotFound)
}

#[tokio::test(start_paused = true)]
async fn errors_the_breaker_ignores_are_not_retried() {
    assert!(matches!(lookup().await, Err(DepError::NotFound)));
    assert_eq!(NOT_FOUND.load(Relaxed), 1);
}

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

struct Client {
    calls: AtomicU32,
}

impl Client {
    /// A generic method with a bulkhead: each attempt takes (and gives back) a slot.
    #[bulkhead(pool = 1, name = "rt-method")]
    #[retry(attempts = 2, backoff = "1ms")]
    async fn get<T: Clone + Send>(&self, v: T) -> Result<T, DepError> {
        if self.calls.fetch_add(1, Relaxed) == 0 {
            return Err(DepError::Down);
        }
        Ok(v)
    }
}

#[tokio::test(start_paused = true)]
async fn methods_and_generics_retry_through_the_bulkhead() {
    let c = Client {
        calls: AtomicU32::new(0),
    };
    assert_eq!(c.get(vec![1, 2]).await.unwrap(), vec![1, 2]);
    assert_eq!(c.calls.load(Relaxed), 2);
    assert_eq!(registry().bulkhead("rt-method").unwrap().in_flight(), 0);
    let m = fusebox::metrics();
    assert_eq!(m.retry("rt-method").unwrap().retries, 1);
}

static HINTED: AtomicU32 = AtomicU32::new(0);

/// `Busy(ms)` carries the server's pushback; `Fatal` is never worth another try.
#[derive(Debug)]
enum ApiError {
    Busy(u64),
    Fatal,
    Rejected,
}

impl From<Rejection> for ApiError {
    fn from(_: Rejection) -> Self {
        ApiError::Rejected
    }
}

fn transient(e: &ApiError) -> bool {
    matches!(e, ApiError::Busy(_))
}

fn pushback(e: &ApiError) -> Option<Duration> {
    match e {
        ApiError::Busy(ms) => Some(Duration::from_millis(*ms)),
        _ => None,
    }
}

// One passed trial closes the breaker again after the hold the hint put on it.
#[retry(attempts = 3, backoff = "1ms", retry_on = transient, retry_after = pushback)]
#[breaker(name = "rt-hinted", half_open_calls = 1)]
async fn hinted(fatal: bool) -> Result<u32, ApiError> {
    let n = HINTED.fetch_add(1, Relaxed) + 1;
    match (fatal, n) {
        (true, _) => Err(ApiError::Fatal),
        (false, 1) => Err(ApiError::Busy(700)),
        (false, _) => Ok(n),
    }
}

#[tokio::test(start_paused = true)]
async fn retry_on_and_retry_after_are_honoured() {
    let started = tokio::time::Instant::now();
    assert_eq!(hinted(false).await.unwrap(), 2);
    assert!(
        started.elapsed() >= Duration::from_millis(700),
        "waited as the server asked"
    );
    assert!(matches!(hinted(true).await, Err(ApiError::Fatal)));
    assert_eq!(HINTED.load(Relaxed), 3, "a fatal error is not retried");
}

static BANNED: AtomicU32 = AtomicU32::new(0);

/// The dependency bans the caller for 30 s on the first call (HTTP 429 with `Retry-After`).
#[retry(attempts = 2, retry_on = transient, retry_after = pushback)]
#[breaker(
    name = "rt-banned",
    open_for = "10s",
    backoff = 2.0,
    open_for_max = "20s"
)]
async fn banned() -> Result<u32, ApiError> {
    BANNED.fetch_add(1, Relaxed);
    Err(ApiError::Busy(30_000))
}

/// Same hint, `hold_open = false`: only the caller that was told waits.
#[retry(attempts = 1, retry_on = transient, retry_after = pushback, hold_open = false)]
#[breaker(name = "rt-paced")]
async fn paced() -> Result<u32, ApiError> {
    Err(ApiError::Busy(30_000))
}

#[tokio::test(start_paused = true)]
async fn retry_after_holds_the_breaker_open_for_every_caller_capped_by_open_for_max() {
    use fusebox::State;
    let started = tokio::time::Instant::now();
    // The caller waits the whole hint (30 s, no deadline), but the hold is capped at
    // `open_for_max` (20 s), so its retry finds the breaker half-open and is its trial.
    assert!(matches!(banned().await, Err(ApiError::Busy(30_000))));
    assert!(started.elapsed() >= Duration::from_secs(30));
    assert_eq!(BANNED.load(Relaxed), 2);
    let m = fusebox::metrics();
    assert_eq!(
        m.retry("rt-banned").unwrap().held_open,
        2,
        "each hint held it again"
    );
    let b = registry().breaker("rt-banned").unwrap();
    assert_eq!(
        b.state(),
        State::ForcedOpen,
        "the retry's own hint holds it again"
    );
    let left = b.metrics().force_expires_in.unwrap();
    assert_eq!(left, Duration::from_secs(20), "capped by open_for_max");
    // Meanwhile every other caller is refused at once, told when to come back.
    let t = tokio::time::Instant::now();
    assert!(matches!(banned().await, Err(ApiError::Rejected)));
    assert_eq!(t.elapsed(), Duration::ZERO, "refused at once, not retried");
    assert_eq!(BANNED.load(Relaxed), 2, "the dependency saw no call");
    tokio::time::advance(Duration::from_secs(20)).await;
    assert_eq!(
        b.metrics().state,
        State::HalfOpen,
        "trials decide once the hold lapses"
    );

    // Without the hold, only the told caller is paced.
    assert!(matches!(paced().await, Err(ApiError::Busy(_))));
    let p = registry().breaker("rt-paced").unwrap();
    assert_eq!(p.state(), State::Closed);
    assert_eq!(fusebox::metrics().retry("rt-paced").unwrap().held_open, 0);
}
