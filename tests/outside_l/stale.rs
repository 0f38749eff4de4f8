//! DESIGN's `stale_for` beside `#[retry]` and `#[bulkhead]`: retries first, then the last good
//! value, and a full pool is a rejection too.

use super::*;

// --- Issues 30 x DESIGN's `stale_for`: retries first, then the last good value ------------

static QUOTE_ATTEMPTS: AtomicU32 = AtomicU32::new(0);
static QUOTE_UP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

#[retry(attempts = 3, backoff = "1ms", budget = 100, budget_floor = 100)]
#[breaker(name = "ol-retry-stale", stale_for = "10m")]
async fn quote(sku: u32) -> Result<u32, ApiError> {
    QUOTE_ATTEMPTS.fetch_add(1, SeqCst);
    if QUOTE_UP.load(SeqCst) {
        Ok(sku * 10)
    } else {
        Err(ApiError::Down)
    }
}

/// `stale_for` answers "while rejected or failing" and `#[retry]` sits outermost: a failing
/// call is retried (each attempt reaches the dependency) before the last good value of the
/// same arguments answers it, once, at the end; other arguments get the error.
#[tokio::test(start_paused = true)]
async fn a_failing_call_is_retried_before_its_last_good_value_answers() {
    QUOTE_UP.store(true, SeqCst);
    assert_eq!(quote(4).await, Ok(40));
    QUOTE_UP.store(false, SeqCst);
    QUOTE_ATTEMPTS.store(0, SeqCst);
    assert_eq!(quote(4).await, Ok(40), "the last good value");
    assert_eq!(QUOTE_ATTEMPTS.load(SeqCst), 3, "after every attempt");
    assert_eq!(quote(5).await, Err(ApiError::Down));
    let m = registry().breaker("ol-retry-stale").unwrap().metrics();
    assert_eq!((m.failed, m.stale_served), (6, 1), "{m:?}");
}

// --- DESIGN.md `stale_for` x `#[bulkhead]`: a full pool is a rejection too -----------------

static STOCK_GATE: tokio::sync::Notify = tokio::sync::Notify::const_new();

#[breaker(name = "ol-stale-pool", stale_for = "10m")]
#[bulkhead(name = "ol-stale-pool-slots", pool = 1)]
async fn stock(sku: u32, wait: bool) -> Result<u32, ApiError> {
    if wait {
        STOCK_GATE.notified().await;
    }
    Ok(sku + 1)
}

/// `stale_for`: "while rejected or failing, answer with the last `Ok` value for the same
/// arguments if younger". A full bulkhead rejects: the same arguments get their last good
/// value; arguments with none get the rejection; and the breaker counts no failure.
#[tokio::test(start_paused = true)]
async fn a_full_bulkhead_serves_the_last_good_value_of_the_same_arguments() {
    assert_eq!(stock(1, false).await, Ok(2));
    let holder = tokio::spawn(stock(9, true));
    tokio::task::yield_now().await;
    assert_eq!(
        registry()
            .bulkhead("ol-stale-pool-slots")
            .unwrap()
            .in_flight(),
        1
    );
    // The stale key is every argument: (1, false) has a good value, (2, false) has none.
    assert_eq!(stock(1, false).await, Ok(2), "the last good value");
    let r = stock(2, false).await;
    assert!(
        matches!(r, Err(ApiError::Refused(Rejection::Full { .. }))),
        "{r:?}"
    );
    STOCK_GATE.notify_one();
    assert_eq!(holder.await.unwrap(), Ok(10));
    let m = registry().breaker("ol-stale-pool").unwrap().metrics();
    assert_eq!(
        (m.failed, m.stale_served, m.rejected_by_reason.bulkhead_full),
        (0, 1, 2),
        "{m:?}"
    );
}
