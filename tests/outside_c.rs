//! Issue 30 (`#[retry]`) as a user reads it (the text, DESIGN.md, macros/docs/retry.md
//! and the rustdoc of `fusebox::retry`), through the facade only: what the other retry tests
//! do not cover. Composition with `#[bulkhead]` and keyed breakers, fallbacks taking the
//! call's arguments on methods, cancellation in the middle of a backoff, `total` with the
//! breaker's `timeout` and with a server hint, one budget per name shared by the attribute,
//! the builder and the tower layer, metrics in Prometheus and JSON. Paused clocks, except one
//! bounded real-time test of the budget under load on many threads.

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::time::Duration;

use fusebox::retry::Retry;
use fusebox::{breaker, bulkhead, registry, retry, Error, Rejection, State};

mod common;
use common::ms;

/// A dependency's error as a client writes it.
#[derive(Debug, Clone, PartialEq)]
enum ApiError {
    /// The dependency failed; `Some` carries its `Retry-After`.
    Busy(Option<Duration>),
    /// fusebox refused or timed the call out.
    Refused(Rejection),
}

impl From<Rejection> for ApiError {
    fn from(r: Rejection) -> Self {
        ApiError::Refused(r)
    }
}

fn pushback(e: &ApiError) -> Option<Duration> {
    match e {
        ApiError::Busy(after) => *after,
        ApiError::Refused(_) => None,
    }
}

// --- Keyed breakers --------------------------------------------------------------------

static KEYED: AtomicU32 = AtomicU32::new(0);

/// Region `eu` is rate limited for 10 min; `us` answers. The hint is long because a global
/// snapshot (`fusebox::metrics()`) taken by a parallel test on its own paused clock, ahead of
/// this one's, lapses a timed hold it sees as expired.
#[retry(attempts = 3, backoff = "1ms", retry_after = pushback, total = "1s")]
#[breaker(name = "oc-keyed", key = region, open_for = "1h")]
async fn regional(region: String) -> Result<u32, ApiError> {
    KEYED.fetch_add(1, SeqCst);
    if region == "eu" {
        Err(ApiError::Busy(Some(Duration::from_secs(600))))
    } else {
        Ok(1)
    }
}

/// A `retry_after` hint on a keyed breaker holds that key open, not its neighbours; the
/// caller whose deadline cannot fit the hint gets the failure at once.
#[tokio::test(start_paused = true)]
async fn retry_after_on_a_keyed_breaker_holds_only_that_key() {
    let t = tokio::time::Instant::now();
    let r = regional("eu".to_string()).await;
    assert_eq!(r, Err(ApiError::Busy(Some(Duration::from_secs(600)))));
    assert_eq!(
        t.elapsed(),
        Duration::ZERO,
        "the hint does not fit `total = 1s`"
    );
    assert_eq!(KEYED.load(SeqCst), 1);
    let eu = registry().breaker("oc-keyed/eu").unwrap();
    assert_eq!(eu.state(), State::ForcedOpen);
    assert_eq!(
        eu.metrics().force_expires_in,
        Some(Duration::from_secs(600))
    );
    assert_eq!(regional("us".to_string()).await, Ok(1));
    assert_eq!(
        registry().breaker("oc-keyed/us").unwrap().state(),
        State::Closed
    );
    // Another caller of `eu` is refused at once, with the time left.
    let r = regional("eu".to_string()).await;
    assert!(
        matches!(&r, Err(ApiError::Refused(Rejection::Open { retry_in: Some(d), .. })) if *d == Duration::from_secs(600)),
        "{r:?}"
    );
    assert_eq!(
        KEYED.load(SeqCst),
        2,
        "the refused call never reached the dependency"
    );
    let m = fusebox::metrics();
    let rm = m.retry("oc-keyed").expect("the keyed name's retry metrics");
    assert_eq!((rm.calls, rm.retries, rm.held_open), (3, 0, 1));
}

// --- Bulkhead, fallback with arguments, methods ------------------------------------------

#[derive(Debug, Clone, PartialEq)]
struct Order {
    id: u32,
}

struct Payments {
    calls: AtomicU32,
}

impl Payments {
    /// Written bulkhead first, retry last: the order is still retry, breaker, bulkhead.
    #[bulkhead(pool = 1, name = "oc-pay-pool")]
    #[breaker(name = "oc-pay", fallback = Self::later, window_calls = 20)]
    #[retry(attempts = 3, backoff = "10ms")]
    async fn charge(&self, order: &Order, hold_ms: u64) -> Result<String, ApiError> {
        let _ = order;
        self.calls.fetch_add(1, SeqCst);
        tokio::time::sleep(ms(hold_ms)).await;
        Err(ApiError::Busy(None))
    }

    fn later(&self, order: &Order, _hold_ms: &u64, e: Error<ApiError>) -> Result<String, ApiError> {
        let why = match e {
            Error::Failed(_) => "failed",
            Error::Rejected(Rejection::Full { .. }) => "full",
            Error::Rejected(_) => "refused",
        };
        Ok(format!(
            "queued {} ({why}) after {}",
            order.id,
            self.calls.load(SeqCst)
        ))
    }
}

/// The fallback (a method taking the arguments by reference) answers once, after the last
/// attempt, with the arguments as the caller gave them; every attempt took and gave back the
/// slot and was a call of the breaker.
#[tokio::test(start_paused = true)]
async fn a_method_fallback_with_arguments_answers_once_after_the_retries() {
    let p = Payments {
        calls: AtomicU32::new(0),
    };
    let r = p.charge(&Order { id: 7 }, 1).await;
    assert_eq!(r, Ok("queued 7 (failed) after 3".to_string()));
    assert_eq!(registry().bulkhead("oc-pay-pool").unwrap().in_flight(), 0);
    let b = registry().breaker("oc-pay").unwrap();
    assert_eq!(b.metrics().failed, 3, "each attempt judged as a call");
    let m = fusebox::metrics();
    let rm = m.retry("oc-pay").unwrap();
    assert_eq!((rm.calls, rm.attempts, rm.retries), (1, 3, 2));

    // A full bulkhead is never retried: the fallback answers at once.
    let busy = p.charge(&Order { id: 8 }, 10_000);
    let second = async {
        tokio::task::yield_now().await;
        let t = tokio::time::Instant::now();
        let r = p.charge(&Order { id: 9 }, 1).await;
        (r, t.elapsed())
    };
    let (_, (r, waited)) = tokio::join!(busy, second);
    assert!(r.unwrap().starts_with("queued 9 (full)"));
    assert_eq!(waited, Duration::ZERO);
    let m = fusebox::metrics();
    let rm = m.retry("oc-pay").unwrap();
    assert_eq!(rm.calls, 3);
    assert_eq!(rm.retries, 4, "the refused call made no retry");
}

// --- Cancellation in the middle of a backoff ---------------------------------------------

static CANCELLED: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 5, backoff = "1s", backoff_max = "1s")]
#[bulkhead(pool = 1, name = "oc-cancel")]
async fn slow_to_heal() -> Result<u32, ApiError> {
    CANCELLED.fetch_add(1, SeqCst);
    Err(ApiError::Busy(None))
}

/// Dropping the call while it waits between attempts stops the retries for good and holds
/// no bulkhead slot.
#[tokio::test(start_paused = true)]
async fn a_call_dropped_during_its_backoff_makes_no_more_attempts() {
    let r = tokio::time::timeout(ms(1), slow_to_heal()).await;
    assert!(r.is_err(), "still waiting its backoff: {r:?}");
    assert_eq!(CANCELLED.load(SeqCst), 1);
    assert_eq!(registry().bulkhead("oc-cancel").unwrap().in_flight(), 0);
    tokio::time::advance(Duration::from_secs(30)).await;
    assert_eq!(CANCELLED.load(SeqCst), 1, "nothing runs after the drop");
    // The retry it never made is neither counted nor taken from the name's budget.
    let budget = fusebox::retry::budget("oc-cancel").unwrap();
    assert_eq!((budget.calls(), budget.retries()), (1, 0));
    let m = fusebox::metrics();
    let rm = m.retry("oc-cancel").unwrap();
    assert_eq!((rm.attempts, rm.retries), (1, 0), "attempts made: {rm:?}");
}

// --- `total` with the breaker's timeout, and with a hint ---------------------------------

static SLOW: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 5, backoff = "1ms", total = "2500ms", idempotent)]
#[breaker(name = "oc-total", timeout = "1s", window_calls = 20)]
async fn hangs() -> Result<u32, ApiError> {
    SLOW.fetch_add(1, SeqCst);
    tokio::time::sleep(Duration::from_secs(60)).await;
    Ok(0)
}

/// No attempt starts that could not finish inside `total`, counting the breaker's timeout:
/// two attempts of 1 s fit in 2.5 s, a third would end past it.
#[tokio::test(start_paused = true)]
async fn total_counts_the_breakers_timeout_for_each_attempt() {
    let t = tokio::time::Instant::now();
    let r = hangs().await;
    assert!(
        matches!(r, Err(ApiError::Refused(Rejection::TimedOut { .. }))),
        "{r:?}"
    );
    assert_eq!(SLOW.load(SeqCst), 2);
    assert!(t.elapsed() <= ms(2500), "{:?}", t.elapsed());
}

// --- One budget per name: attribute, builder and tower layer -------------------------------

static SHARED: AtomicU32 = AtomicU32::new(0);

#[retry(
    attempts = 2,
    backoff = "1ms",
    budget = 0,
    budget_floor = 1,
    budget_window = "10s"
)]
#[breaker(name = "oc-shared", window_calls = 100, min_calls = 100)]
async fn shared_by_attribute() -> Result<u32, ApiError> {
    SHARED.fetch_add(1, SeqCst);
    Err(ApiError::Busy(None))
}

/// The builder's `Retry` of the same name draws on the attribute's budget: a floor of one a
/// second over 10 s is 10 retries for both together.
#[tokio::test(start_paused = true)]
async fn the_attribute_and_the_builder_share_the_names_budget() {
    let b = registry().breaker("oc-shared");
    assert!(b.is_some(), "annotated breakers are listed from the start");
    let b = b.unwrap();
    let retry = Retry::builder("oc-shared")
        .attempts(2)
        .budget(fusebox::retry::BudgetConfig {
            share_pct: 0,
            floor_per_s: 1,
            window: Duration::from_secs(10),
        })
        .build()
        .unwrap();
    for _ in 0..8 {
        let _ = shared_by_attribute().await;
        let r: Result<u32, Error<ApiError>> = retry
            .run(|| {
                SHARED.fetch_add(1, SeqCst);
                b.call(async { Err(ApiError::Busy(None)) })
            })
            .await;
        assert!(r.is_err());
    }
    let m = fusebox::metrics();
    let rm = m.retry("oc-shared").unwrap();
    assert_eq!(rm.calls, 16);
    assert_eq!(rm.retries, 10, "one budget: floor 1/s over the 10 s window");
    assert_eq!(rm.budget_exhausted, 6);
    assert_eq!(SHARED.load(SeqCst), 26);
}

/// Under real load from many threads, the retries of one name stay within the share of its
/// calls plus the floor: here 10 % and 2 a second over windows of 1 s, for about 2 s.
#[test]
fn the_budget_holds_under_real_load_on_many_threads() {
    static LOAD: AtomicU32 = AtomicU32::new(0);
    #[retry(
        attempts = 3,
        backoff = "1ms",
        backoff_max = "2ms",
        budget = 10,
        budget_floor = 2,
        budget_window = "1s"
    )]
    #[bulkhead(pool = 64, name = "oc-load")]
    async fn always_fails() -> Result<u32, ApiError> {
        LOAD.fetch_add(1, SeqCst);
        tokio::task::yield_now().await;
        Err(ApiError::Busy(None))
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_time()
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    rt.block_on(async {
        let mut tasks = Vec::new();
        for _ in 0..16 {
            tasks.push(tokio::spawn(async {
                let end = tokio::time::Instant::now() + Duration::from_secs(2);
                while tokio::time::Instant::now() < end {
                    let _ = always_fails().await;
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
    });
    let secs = started.elapsed().as_secs_f64();
    let m = fusebox::metrics();
    let rm = m.retry("oc-load").unwrap();
    assert!(rm.calls > 1000, "real load: {rm:?}");
    assert_eq!(rm.attempts, rm.calls + rm.retries);
    assert_eq!(u64::from(LOAD.load(SeqCst)), rm.attempts);
    // Each window of 1 s: at most 10 % of its calls + 2; over `secs` that is at most
    // 10 % of all calls + 2 per started window (plus one for the partial window).
    let bound = rm.calls as f64 * 0.10 + 2.0 * (secs.ceil() + 1.0);
    assert!(
        (rm.retries as f64) <= bound,
        "{} retries > {bound}: {rm:?}",
        rm.retries
    );
    assert!(rm.retries > 0 && rm.budget_exhausted > 0, "{rm:?}");
}

// --- Metrics in every output -----------------------------------------------------------

static EXPORTED: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 3, backoff = "1ms")]
#[breaker(name = "oc-export", window_calls = 50, min_calls = 50)]
async fn exported() -> Result<u32, ApiError> {
    if EXPORTED.fetch_add(1, SeqCst) % 3 == 2 {
        Ok(1)
    } else {
        Err(ApiError::Busy(None))
    }
}

/// Attempts, retries and budget refusals per name in Prometheus text (and JSON with serde).
#[tokio::test(start_paused = true)]
async fn retry_counts_are_in_prometheus_and_json() {
    for _ in 0..4 {
        let _ = exported().await;
    }
    let m = fusebox::metrics();
    let rm = m.retry("oc-export").unwrap().clone();
    assert_eq!((rm.calls, rm.attempts), (4, rm.calls + rm.retries));
    let text = fusebox::metrics::prometheus();
    for (family, v) in [
        ("fusebox_retry_attempts_total", rm.attempts),
        ("fusebox_retry_retries_total", rm.retries),
        ("fusebox_retry_budget_exhausted_total", rm.budget_exhausted),
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(family) && l.contains("\"oc-export\""))
            .unwrap_or_else(|| panic!("no {family} for oc-export in\n{text}"));
        assert!(line.ends_with(&format!(" {v}")), "{line}");
    }
    #[cfg(feature = "serde")]
    {
        let json = serde_json::to_value(&m).unwrap();
        let text = json.to_string();
        assert!(text.contains("oc-export"), "{text}");
        let one = serde_json::to_value(&rm).unwrap();
        assert_eq!(one["retries"], rm.retries);
        assert_eq!(one["budget_exhausted"], rm.budget_exhausted);
    }
}

// --- The tower layer on the attribute's budget -----------------------------------------

#[cfg(feature = "tower")]
mod tower_layer {
    use super::*;
    use fusebox::tower::{BreakerLayer, RetryLayer};
    use tower::{service_fn, ServiceBuilder, ServiceExt};

    static VIA_ATTR: AtomicU32 = AtomicU32::new(0);

    #[retry(
        attempts = 3,
        backoff = "1ms",
        budget = 0,
        budget_floor = 1,
        budget_window = "4s"
    )]
    #[breaker(name = "oc-tower", window_calls = 100, min_calls = 100)]
    async fn via_attribute() -> Result<u32, ApiError> {
        VIA_ATTR.fetch_add(1, SeqCst);
        Err(ApiError::Busy(None))
    }

    /// The layer and the attribute of one name draw on one budget and count in one row.
    #[tokio::test(start_paused = true)]
    async fn the_layer_and_the_attribute_share_the_budget() {
        let layer_calls = std::sync::Arc::new(AtomicU32::new(0));
        let seen = layer_calls.clone();
        let retry = Retry::builder("oc-tower")
            .attempts(3)
            .budget(fusebox::retry::BudgetConfig {
                share_pct: 0,
                floor_per_s: 1,
                window: Duration::from_secs(4),
            })
            .build()
            .unwrap();
        let svc = ServiceBuilder::new()
            .layer(RetryLayer::new(retry))
            .layer(
                BreakerLayer::new(fusebox::Breaker::builder("oc-tower-svc").window_calls(100))
                    .unwrap(),
            )
            .service(service_fn(move |_: u32| {
                seen.fetch_add(1, SeqCst);
                async { Err::<u32, _>("down") }
            }));
        let _ = via_attribute().await; // 2 retries
        let _ = svc.clone().oneshot(1).await; // 2 retries: 4 s of floor used
        let _ = via_attribute().await; // refused by the budget
        let _ = svc.clone().oneshot(1).await; // refused by the budget
        assert_eq!(VIA_ATTR.load(SeqCst), 4);
        assert_eq!(layer_calls.load(SeqCst), 4);
        let m = fusebox::metrics();
        let rm = m.retry("oc-tower").unwrap();
        assert_eq!((rm.calls, rm.retries, rm.budget_exhausted), (4, 4, 2));
    }
}

// --- A retry alone: named by its module path -----------------------------------------------

static ALONE: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 2, backoff = "1ms")]
async fn alone_plain() -> Result<u32, String> {
    if ALONE.fetch_add(1, SeqCst) == 0 {
        Err("reset".into())
    } else {
        Ok(2)
    }
}

/// Without a breaker or bulkhead the budget (and the metrics row) is named by the function's
/// module path and name, as retry.md says.
#[tokio::test(start_paused = true)]
async fn a_retry_alone_is_named_by_its_module_path() {
    assert_eq!(alone_plain().await, Ok(2));
    let names: Vec<_> = fusebox::retry::budgets()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let b = fusebox::retry::budget("outside_c::alone_plain")
        .unwrap_or_else(|| panic!("no budget named outside_c::alone_plain in {names:?}"));
    assert_eq!((b.calls(), b.retries()), (1, 1));
}
