//! `retry_on` and `retry_after`: which errors are worth another try, and a server's pushback
//! that holds the breaker open for every caller, capped by `open_for_max`.

use super::*;

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
