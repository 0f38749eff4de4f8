//! Annotated functions driven on a paused clock, checked through the registry and metrics.

mod common;

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::time::Duration;

use common::{counts, DepError};
use fusebox::{breaker, registry, Error, Rejection, State};
use tokio::time::{advance, sleep};

const MS: Duration = Duration::from_millis(1);

#[breaker(name = "attr-slow", trip_p95 = "500ms", window_calls = 20)]
async fn slow_dependency(latency: Duration) -> Result<&'static str, DepError> {
    sleep(latency).await;
    Ok("answer")
}

#[tokio::test(start_paused = true)]
async fn a_slow_dependency_trips_trip_p95() {
    // 1 slow call in 20 is exactly 5 %: p95 is not above the bound yet.
    for i in 0..20 {
        let latency = if i == 19 { 600 * MS } else { 10 * MS };
        assert_eq!(slow_dependency(latency).await, Ok("answer"));
    }
    let b = registry()
        .breaker("attr-slow")
        .expect("registered on first call");
    assert_eq!(b.state(), State::Closed);
    // A second slow call: 2 of the last 20 (10 %) are slower than 500 ms, so p95 > 500 ms.
    assert_eq!(slow_dependency(600 * MS).await, Ok("answer"));
    assert_eq!(b.state(), State::Open);
    assert_eq!(b.metrics().slow, 2);
    let rejected = slow_dependency(10 * MS).await.unwrap_err();
    assert!(rejected.is_open(), "{rejected:?}");
}

static FAILING_CALLS: AtomicU32 = AtomicU32::new(0);

#[breaker(
    name = "attr-failing",
    failure_rate = 50,
    window_calls = 10,
    open_for = "5s",
    half_open_calls = 1
)]
async fn failing_dependency(up: bool) -> Result<u32, DepError> {
    FAILING_CALLS.fetch_add(1, SeqCst);
    if up {
        Ok(1)
    } else {
        Err(DepError::Down)
    }
}

#[tokio::test(start_paused = true)]
async fn a_failing_dependency_trips_failure_rate_and_recovers_after_open_for() {
    for i in 0..10 {
        // Half of the calls fail: 50 % reaches `failure_rate = 50`.
        let r = failing_dependency(i % 2 == 0).await;
        assert_eq!(r.is_ok(), i % 2 == 0);
    }
    let b = registry().breaker("attr-failing").unwrap();
    assert_eq!(b.state(), State::Open);
    // Open: the dependency is not called, the caller gets its own error type back.
    let before = FAILING_CALLS.load(SeqCst);
    match failing_dependency(true).await {
        Err(DepError::Unavailable(Rejection::Open { name, .. })) => {
            assert_eq!(&*name, "attr-failing")
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    assert_eq!(FAILING_CALLS.load(SeqCst), before);
    // `open_for = "5s"`, then one trial call (`half_open_calls = 1`) closes it again.
    advance(Duration::from_secs(5)).await;
    assert_eq!(failing_dependency(true).await, Ok(1));
    assert_eq!(b.state(), State::Closed);
}

#[derive(Debug, PartialEq)]
enum Verification {
    Verified,
    WillConfirmByEmail,
}

static FALLBACK_SAW_FAILED: AtomicU32 = AtomicU32::new(0);
static FALLBACK_SAW_REJECTED: AtomicU32 = AtomicU32::new(0);

#[breaker(name = "attr-payments", window_calls = 4, fallback = confirm_by_email)]
async fn verify_payment(amount: u32, up: bool) -> Result<Verification, DepError> {
    let _ = amount;
    if up {
        Ok(Verification::Verified)
    } else {
        Err(DepError::Down)
    }
}

fn confirm_by_email(err: Error<DepError>) -> Result<Verification, DepError> {
    match err {
        Error::Failed(_) => FALLBACK_SAW_FAILED.fetch_add(1, SeqCst),
        Error::Rejected(_) => FALLBACK_SAW_REJECTED.fetch_add(1, SeqCst),
    };
    Ok(Verification::WillConfirmByEmail)
}

#[tokio::test(start_paused = true)]
async fn the_fallback_answers_failures_and_rejections() {
    assert_eq!(verify_payment(10, true).await, Ok(Verification::Verified));
    // Failures get the fallback's answer, and count: 3 of 4 trip the default 50 %.
    for _ in 0..3 {
        assert_eq!(
            verify_payment(10, false).await,
            Ok(Verification::WillConfirmByEmail)
        );
    }
    assert_eq!(FALLBACK_SAW_FAILED.load(SeqCst), 3);
    assert_eq!(
        registry().breaker("attr-payments").unwrap().state(),
        State::Open
    );
    // Open: even a call that would succeed is answered by the fallback, at once.
    assert_eq!(
        verify_payment(10, true).await,
        Ok(Verification::WillConfirmByEmail)
    );
    assert_eq!(FALLBACK_SAW_REJECTED.load(SeqCst), 1);
}

#[breaker(name = "attr-async-fallback", timeout = "100ms", fallback = from_replica)]
async fn read_primary(latency: Duration) -> Result<&'static str, DepError> {
    sleep(latency).await;
    Ok("primary")
}

async fn from_replica(err: Error<DepError>) -> Result<&'static str, DepError> {
    assert!(matches!(err, Error::Rejected(Rejection::TimedOut { .. })));
    sleep(MS).await;
    Ok("replica")
}

#[tokio::test(start_paused = true)]
async fn an_async_fallback_answers_a_timeout() {
    assert_eq!(read_primary(MS).await, Ok("primary"));
    assert_eq!(read_primary(Duration::from_secs(10)).await, Ok("replica"));
    let m = registry().breaker("attr-async-fallback").unwrap().metrics();
    assert_eq!(m.timed_out, 1);
}

#[breaker(name = "attr-address", timeout = "200ms", fallback = address_unknown)]
async fn address_of(customer: u32, latency: Duration) -> String {
    sleep(latency).await;
    format!("{customer} Main St")
}

fn address_unknown(_: Error<std::convert::Infallible>) -> String {
    "address unavailable".to_owned()
}

#[tokio::test(start_paused = true)]
async fn a_plain_return_type_works_with_a_fallback() {
    assert_eq!(address_of(7, MS).await, "7 Main St");
    assert_eq!(
        address_of(7, Duration::from_secs(1)).await,
        "address unavailable"
    );
}

#[breaker(name = "attr-redis", key = shard, window_calls = 2)]
async fn cache_get(shard: u16, up: bool) -> Result<u32, DepError> {
    if up {
        Ok(u32::from(shard))
    } else {
        Err(DepError::Down)
    }
}

#[tokio::test(start_paused = true)]
async fn keyed_breakers_are_independent() {
    for _ in 0..2 {
        assert_eq!(cache_get(3, false).await, Err(DepError::Down));
    }
    assert_eq!(cache_get(4, true).await, Ok(4));
    let shard3 = registry().breaker("attr-redis/3").unwrap();
    let shard4 = registry().breaker("attr-redis/4").unwrap();
    assert_eq!(shard3.state(), State::Open);
    assert_eq!(shard4.state(), State::Closed);
    assert!(cache_get(3, true).await.unwrap_err().is_open());
    assert_eq!(cache_get(4, true).await, Ok(4));
    assert_eq!(shard3.metrics().key.as_deref(), Some("3"));
}

#[breaker(name = "attr-catalog", window_calls = 2, failure = counts, fallback = catalog_fallback)]
async fn catalog_item(id: u32) -> Result<u32, DepError> {
    if id == 0 {
        Err(DepError::NotFound)
    } else {
        Err(DepError::Down)
    }
}

fn catalog_fallback(_: Error<DepError>) -> Result<u32, DepError> {
    Ok(999)
}

#[tokio::test(start_paused = true)]
async fn uncounted_errors_pass_through_without_the_fallback() {
    for _ in 0..5 {
        assert_eq!(catalog_item(0).await, Err(DepError::NotFound));
    }
    let b = registry().breaker("attr-catalog").unwrap();
    assert_eq!(b.state(), State::Closed);
    // Not failures: successes of a dependency that answered, not ignored calls.
    let m = b.metrics();
    assert_eq!((m.succeeded, m.ignored, m.failed), (5, 0, 0));
    // A counted failure does go to the fallback.
    assert_eq!(catalog_item(1).await, Ok(999));
    assert_eq!(b.metrics().failed, 1);
}

struct Inventory {
    up: bool,
    calls: AtomicU32,
}

impl Inventory {
    #[breaker(name = "attr-inventory", window_calls = 2)]
    async fn stock(&self, sku: &str) -> Result<usize, DepError> {
        self.calls.fetch_add(1, SeqCst);
        if self.up {
            Ok(sku.len())
        } else {
            Err(DepError::Down)
        }
    }

    #[breaker(name = "attr-inventory-mut")]
    async fn restock(&mut self) -> Result<bool, DepError> {
        self.up = true;
        Ok(self.up)
    }
}

#[tokio::test(start_paused = true)]
async fn methods_with_self_work() {
    let mut inv = Inventory {
        up: false,
        calls: AtomicU32::new(0),
    };
    for _ in 0..2 {
        assert_eq!(inv.stock("sku-1").await, Err(DepError::Down));
    }
    assert!(inv.stock("sku-1").await.unwrap_err().is_open());
    assert_eq!(inv.calls.load(SeqCst), 2, "an open breaker does not call");
    assert_eq!(inv.restock().await, Ok(true));
    assert_eq!(
        registry().breaker("attr-inventory").unwrap().state(),
        State::Open
    );
}

#[breaker]
async fn default_named() -> Result<(), DepError> {
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn the_default_name_is_module_path_and_fn_name() {
    default_named().await.unwrap();
    assert!(registry().breaker("attributes::default_named").is_some());
}
