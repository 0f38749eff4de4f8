//! What is not retried: an open breaker (in either order of the attributes), a timeout
//! unless `idempotent`, past the budget, and errors the breaker does not count.

use super::*;

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

static OPENS: AtomicU32 = AtomicU32::new(0);

#[retry(attempts = 5, backoff = "1s", backoff_max = "1s")]
#[breaker(
    name = "rt-opens-midway",
    window_calls = 2,
    min_calls = 2,
    open_for = "60s"
)]
async fn opens_midway() -> Result<u32, DepError> {
    OPENS.fetch_add(1, Relaxed);
    Err(DepError::Down)
}

#[tokio::test(start_paused = true)]
async fn a_breaker_that_opens_between_attempts_costs_no_retry_and_no_wait() {
    let began = tokio::time::Instant::now();
    let r = opens_midway().await;
    // The second attempt opened the breaker (two of two failed): a third would wait its
    // backoff only to be refused, so none is made; the refusal comes back at once.
    assert!(
        matches!(r, Err(DepError::Unavailable(Rejection::Open { .. }))),
        "{r:?}"
    );
    assert_eq!(
        OPENS.load(Relaxed),
        2,
        "two attempts reached the dependency"
    );
    let m = fusebox::metrics();
    assert_eq!(
        m.retry("rt-opens-midway").unwrap().retries,
        1,
        "one retry granted, none spent on an open breaker"
    );
    assert!(
        began.elapsed() <= Duration::from_secs(1),
        "one backoff at most: {:?}",
        began.elapsed()
    );
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
