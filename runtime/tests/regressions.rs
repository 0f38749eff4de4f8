//! Bugs found while proving the runtime correct (issue 7); each test failed before its fix.

mod common;
use common::*;

use std::time::Duration;

use fusebox_runtime::{Breaker, ConfigError, State};
use tokio::time::advance;

#[tokio::test(start_paused = true)]
async fn a_slow_call_is_counted_slow_once_when_the_breaker_opened_meanwhile() {
    let b = Breaker::builder("reg-slow-once")
        .window_calls(4)
        .min_calls(2)
        .slow(secs(1), 100)
        .open_for(secs(60))
        .build_detached()
        .unwrap();
    let slow = {
        let b = b.clone();
        tokio::spawn(async move { ok(&b, secs(2)).await })
    };
    tokio::task::yield_now().await;
    let _ = fail(&b, MS).await;
    let _ = fail(&b, MS).await;
    assert_eq!(b.state(), State::Open);
    // Passes the slow bound while the breaker is open, then finishes slow.
    slow.await.unwrap().unwrap();
    assert_eq!(b.metrics().slow, 1, "one slow call, counted once");
}

#[tokio::test(start_paused = true)]
async fn a_timeout_beyond_the_clock_range_means_no_timeout_not_a_panic() {
    let b = Breaker::builder("reg-timeout-max")
        .timeout(Duration::MAX)
        .slow(Duration::MAX, 50)
        .build_detached()
        .unwrap();
    ok(&b, MS).await.unwrap();
    assert_eq!(b.metrics().succeeded, 1);
}

#[tokio::test(start_paused = true)]
async fn a_trial_without_timeout_under_a_huge_half_open_window_does_not_panic() {
    let b = Breaker::builder("reg-trial-huge-window")
        .window_calls(2)
        .open_for(secs(1))
        .half_open_window(Duration::MAX)
        .half_open_pct(100)
        .build_detached()
        .unwrap();
    let _ = fail(&b, MS).await;
    let _ = fail(&b, MS).await;
    assert_eq!(b.state(), State::Open);
    advance(secs(2)).await;
    ok(&b, MS).await.unwrap();
    assert_eq!(b.state(), State::HalfOpen);
}

#[tokio::test(start_paused = true)]
async fn a_half_open_window_longer_than_584_years_is_not_cut_short() {
    // 18 446 744 074 s is just past u64::MAX nanoseconds; truncated it was 0.29 s.
    let b = Breaker::builder("reg-half-open-window-wrap")
        .window_calls(2)
        .open_for(secs(1))
        .half_open_window(secs(18_446_744_074))
        .half_open_pct(100)
        .timeout(secs(1))
        .build_detached()
        .unwrap();
    let _ = fail(&b, MS).await;
    let _ = fail(&b, MS).await;
    advance(secs(2)).await;
    ok(&b, MS).await.unwrap();
    advance(secs(1)).await;
    ok(&b, MS).await.unwrap();
    assert_eq!(
        b.state(),
        State::HalfOpen,
        "the half-open window is far from over"
    );
}

#[test]
fn a_count_window_too_large_to_allocate_is_a_typed_error() {
    // u32::MAX entries would be a 34 GB allocation: the process would abort in `build`.
    let err = Breaker::builder("reg-window-huge")
        .window_calls(u32::MAX)
        .config()
        .unwrap_err();
    assert!(
        matches!(
            err,
            ConfigError::OutOfRange {
                field: "window_calls",
                ..
            }
        ),
        "{err:?}"
    );
}
