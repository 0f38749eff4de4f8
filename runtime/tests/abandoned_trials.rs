//! Issue 18 item 3: half-open trials that the caller abandons (a client deadline shorter than
//! the breaker's own timeout) are judged when they were already late, so a dependency that
//! hangs reopens the breaker instead of keeping it half-open forever.

use std::future::pending;
use std::time::Duration;

use fusebox_runtime::{Breaker, BreakerMetrics, Error, State};
use tokio::time::{advance, timeout};

const MS: Duration = Duration::from_millis(1);

/// A dependency that never answers.
async fn hang(b: &Breaker) -> Result<(), Error<&'static str>> {
    b.call(pending()).await
}

/// `n` calls at 20/s, each abandoned by its caller after `deadline` (`tokio::time::timeout`).
async fn callers(b: &Breaker, n: u32, deadline: Duration) {
    for _ in 0..n {
        let b = b.clone();
        tokio::spawn(async move { timeout(deadline, hang(&b)).await });
        // Let it start now, then move on to the next caller's turn.
        tokio::task::yield_now().await;
        step(50 * MS).await;
    }
    step(deadline).await;
}

/// Moves the clock a millisecond at a time, so every timer fires (and every caller gives up)
/// at its own instant rather than all at the end of one jump.
async fn step(d: Duration) {
    for _ in 0..d.as_millis() {
        advance(MS).await;
    }
}

/// Calls that got past admission (everything but the breaker's own rejections).
fn let_through(m: &BreakerMetrics) -> u64 {
    m.calls - m.rejected
}

#[tokio::test(start_paused = true)]
async fn hung_trials_abandoned_by_the_caller_reopen_the_breaker() {
    // The numbers: `trip_p95 = "20ms", open_for = "1s", half_open_calls = 3`, a
    // dependency that hangs, called at 20/s by a caller with a 50 ms deadline, for 10 s.
    let b = Breaker::builder("abandoned-calls")
        .trip_p95(20 * MS)
        .open_for(Duration::from_secs(1))
        .half_open_calls(3)
        .build_detached()
        .unwrap();
    callers(&b, 200, 50 * MS).await;
    let m = b.metrics();
    // Before the fix: opened once, then half-open for 9 s with every trial slot re-granted.
    assert!(
        m.times_opened >= 5,
        "reopened after each failed trial: {m:?}"
    );
    assert_ne!(m.state, State::HalfOpen, "{m:?}");
    // 20 calls to trip, then about one trial per open period.
    assert!(
        let_through(&m) <= 40,
        "{} let through: {m:?}",
        let_through(&m)
    );
    assert_eq!(
        m.failures(),
        0,
        "abandoned calls are still cancellations: {m:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn share_mode_judges_abandoned_trials_at_the_end_of_its_window() {
    let b = Breaker::builder("abandoned-share")
        .trip_p95(20 * MS)
        .open_for(Duration::from_secs(1))
        .half_open_pct(20)
        .half_open_window(Duration::from_secs(2))
        .build_detached()
        .unwrap();
    // 1 s to trip, 1 s open, 2 s of sampling, then judged: open again at 4 s.
    callers(&b, 90, 50 * MS).await;
    let m = b.metrics();
    assert!(m.times_opened >= 2, "the trials were judged: {m:?}");
}

#[tokio::test(start_paused = true)]
async fn a_trial_dropped_before_the_slow_bound_is_only_cancelled() {
    let b = Breaker::builder("abandoned-early")
        .trip_p95(20 * MS)
        .open_for(Duration::from_secs(1))
        .half_open_calls(3)
        .build_detached()
        .unwrap();
    // Trip it with hung calls first, then callers that give up after 10 ms.
    callers(&b, 20, 50 * MS).await;
    assert_eq!(b.state(), State::Open, "{:?}", b.metrics());
    advance(Duration::from_secs(1)).await;
    callers(&b, 20, 10 * MS).await;
    let m = b.metrics();
    assert_eq!(m.state, State::HalfOpen, "no trial was judged: {m:?}");
    assert_eq!(m.times_opened, 1, "{m:?}");
    // Every early drop freed its slot, so every caller got a trial.
    assert_eq!(let_through(&m), 40, "{m:?}");
}
