//! A time window puts each call in the slot of the instant it ended. On a paused clock that
//! instant is read from the exact (virtual) clock, never the coarse real one
//! (`runtime/src/clock/coarse.rs` says why): a call right after an idle gap (`advance`) lands
//! in the slot of the new time, to the nanosecond, including calls that answer in their first
//! poll, which read the clock only for their slot.

mod common;
use common::*;

use std::time::Duration;

use fusebox_runtime::{Breaker, Error, State};
use tokio::time::advance;

/// A call that fails in its first poll (never waits, so it is not timed).
async fn fail_now(b: &Breaker) -> Result<(), Error<&'static str>> {
    b.call(async { Err("boom") }).await
}

/// A call that succeeds in its first poll.
async fn ok_now(b: &Breaker) -> Result<(), Error<&'static str>> {
    b.call(async { Ok(()) }).await
}

/// 10 s window of ten 1 s slots; trips at 50 % of at least 4 calls.
fn windowed(name: &str) -> Breaker {
    Breaker::builder(name)
        .window(secs(10))
        .min_calls(4)
        .failure_rate(50)
        .build_detached()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_call_after_an_idle_gap_never_joins_the_calls_before_it() {
    let b = windowed("slot-clock-gap");
    for _ in 0..3 {
        fail_now(&b).await.unwrap_err();
    }
    assert_eq!(b.metrics().window_calls, 3);
    // Idle for a whole window: a cached time would put the next failure beside the three
    // old ones (4 of 4 failed: open); the exact one puts it alone in a fresh slot.
    advance(secs(10)).await;
    fail_now(&b).await.unwrap_err();
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.metrics().window_calls, 1, "the three old calls expired");
    for _ in 0..3 {
        ok_now(&b).await.unwrap();
    }
    assert_eq!(b.state(), State::Closed, "1 failure of 4 calls");
}

#[tokio::test(start_paused = true)]
async fn a_slot_turns_over_at_its_boundary_to_the_nanosecond() {
    let b = windowed("slot-clock-boundary");
    fail_now(&b).await.unwrap_err();
    // One nanosecond before the first slot leaves the window: still counted.
    advance(secs(10) - Duration::from_nanos(1)).await;
    ok_now(&b).await.unwrap();
    assert_eq!(b.metrics().window_calls, 2);
    // At the boundary the first slot (the failure) is gone; the success of the last slot stays.
    advance(Duration::from_nanos(1)).await;
    ok_now(&b).await.unwrap();
    let m = b.metrics();
    assert_eq!(
        m.window_calls, 2,
        "the failure expired, the two successes stay"
    );
    assert_eq!(m.failed, 1, "lifetime counters keep it");
}

#[tokio::test(start_paused = true)]
async fn a_call_a_second_keeps_exactly_the_last_ten_seconds() {
    let b = windowed("slot-clock-steps");
    // One call at each whole second: the 10 s window holds the calls of the last ten
    // seconds, so after a gap of one slot the oldest call leaves as the new one arrives.
    for i in 0..25u64 {
        ok_now(&b).await.unwrap();
        assert_eq!(b.metrics().window_calls, (i + 1).min(10), "at {i} s");
        advance(secs(1)).await;
    }
}
