//! Tripping on latency: completed slow calls, hung calls in flight, timeouts.

mod common;
use common::*;

use std::time::Duration;

use fusebox_runtime::{Breaker, Error, Rejection, State};
use tokio::time::{advance, sleep};

#[tokio::test(start_paused = true)]
async fn trip_p95_opens_on_a_slow_dependency_with_no_errors() {
    let b = Breaker::builder("lat-p95")
        .window_calls(20)
        .trip_p95(Duration::from_millis(500))
        .build()
        .unwrap();
    // 19 fast and 1 slow: 5 % slow is p95 at the bound, not above it.
    for _ in 0..19 {
        ok(&b, 80 * MS).await.unwrap();
    }
    ok(&b, secs(8)).await.unwrap();
    assert_eq!(b.state(), State::Closed);
    ok(&b, secs(8)).await.unwrap();
    assert_eq!(b.state(), State::Open, "2 of 20 slow: p95 > 500 ms");
    let m = b.metrics();
    assert_eq!(m.failures(), 0);
    assert!(
        m.p99.unwrap() > secs(5),
        "p99 reflects the 8 s calls: {:?}",
        m.p99
    );
}

#[tokio::test(start_paused = true)]
async fn hung_calls_trip_the_breaker_before_they_finish() {
    let b = Breaker::builder("lat-hung")
        .window_calls(10)
        .min_calls(5)
        .slow(Duration::from_millis(500), 50)
        .build()
        .unwrap();
    let hung: Vec<_> = (0..5)
        .map(|_| {
            let b = b.clone();
            tokio::spawn(async move { ok(&b, secs(3600)).await })
        })
        .collect();
    tokio::task::yield_now().await;
    assert_eq!(b.state(), State::Closed);
    advance(Duration::from_millis(501)).await;
    tokio::task::yield_now().await;
    assert_eq!(
        b.state(),
        State::Open,
        "five calls in flight past the bound are slow"
    );
    assert_eq!(b.metrics().slow, 5);
    for h in hung {
        h.abort();
    }
}

#[tokio::test(start_paused = true)]
async fn a_timeout_is_a_failure_and_returns_timed_out() {
    let b = Breaker::builder("lat-timeout")
        .window_calls(4)
        .timeout(Duration::from_millis(800))
        .build()
        .unwrap();
    let r = ok(&b, secs(3)).await;
    match r {
        Err(Error::Rejected(Rejection::TimedOut { after, .. })) => assert_eq!(after, 800 * MS),
        other => panic!("expected TimedOut, got {other:?}"),
    }
    let m = b.metrics();
    assert_eq!(m.timed_out, 1);
    assert_eq!(m.slow, 1);
    for _ in 0..3 {
        let _ = ok(&b, secs(3)).await;
    }
    assert_eq!(b.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn trials_use_the_half_open_timeout() {
    // Normal timeout 800 ms, cold dependency at 2 s, trial timeout 3 s: the trial succeeds.
    let b = Breaker::builder("lat-trial-timeout")
        .window_calls(2)
        .timeout(800 * MS)
        .half_open_timeout(secs(3))
        .half_open_calls(1)
        .build()
        .unwrap();
    let _ = ok(&b, secs(2)).await;
    let _ = ok(&b, secs(2)).await;
    assert_eq!(b.state(), State::Open);
    advance(secs(30)).await;
    ok(&b, secs(2)).await.unwrap();
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn a_hung_trial_without_any_timeout_cannot_hold_half_open() {
    let b = Breaker::builder("lat-hung-trial")
        .window_calls(2)
        .half_open_calls(1)
        .open_for(secs(10))
        .build()
        .unwrap();
    let _ = fail(&b, MS).await;
    let _ = fail(&b, MS).await;
    advance(secs(10)).await;
    let b2 = b.clone();
    let trial = tokio::spawn(async move { ok(&b2, secs(1_000_000)).await });
    sleep(secs(11)).await;
    assert!(matches!(
        trial.await.unwrap(),
        Err(Error::Rejected(Rejection::TimedOut { .. }))
    ));
    assert_eq!(
        b.state(),
        State::Open,
        "the hung trial timed out and reopened the breaker"
    );
}

/// A review: a call counted slow in flight whose sample then left the window (aged out of a
/// time window, or pushed out of a count window by newer calls) and that ended failed was
/// lost: the failure amended a sample no longer there, so the breaker stayed closed on a
/// window whose recent calls were failing.
#[tokio::test(start_paused = true)]
async fn a_failure_that_outlived_its_slow_sample_still_counts() {
    for (name, windowed) in [
        (
            "lat-outlived-time",
            Breaker::builder("lat-outlived-time").window(secs(10)),
        ),
        (
            "lat-outlived-count",
            Breaker::builder("lat-outlived-count").window_calls(10),
        ),
    ] {
        let b = windowed
            .min_calls(4)
            .failure_rate(15)
            .slow(secs(5), 100)
            .build()
            .unwrap();
        // Two calls that hang 20 s, then fail: slow in flight at 5 s.
        let slow: Vec<_> = (0..2)
            .map(|_| {
                let b = b.clone();
                tokio::spawn(async move { fail(&b, secs(20)).await })
            })
            .collect();
        tokio::task::yield_now().await;
        // Meanwhile one success a second: their slow samples leave the window.
        for _ in 0..20 {
            ok(&b, Duration::ZERO).await.unwrap();
            advance(secs(1)).await;
        }
        for h in slow {
            assert!(matches!(h.await.unwrap(), Err(Error::Failed(_))));
        }
        // The last 10 calls or 10 s: about 10 successes and the 2 failures that just ended.
        let m = b.metrics();
        assert_eq!(b.state(), State::Open, "{name}: {m:?}");
    }
}

/// DESIGN: "p95 > 500ms ⇔ more than 5% of calls slower than 500ms". A review: calls of
/// exactly the bound counted slow, so `trip_p50 = "100ms"` opened on a p50 *at* 100 ms (on a
/// paused clock `sleep(bound)` lands exactly there). `slow` keeps "at least the bound".
#[tokio::test(start_paused = true)]
async fn a_percentile_rule_opens_past_its_bound_not_at_it() {
    let p50 = Breaker::builder("lat-p50-exact")
        .window_calls(2)
        .min_calls(2)
        .trip_p50(100 * MS)
        .build()
        .unwrap();
    ok(&p50, 100 * MS).await.unwrap();
    ok(&p50, 100 * MS).await.unwrap();
    assert_eq!(
        p50.state(),
        State::Closed,
        "p50 at the bound does not exceed it"
    );
    assert_eq!(p50.metrics().slow, 0);
    ok(&p50, 101 * MS).await.unwrap();
    ok(&p50, 101 * MS).await.unwrap();
    assert_eq!(p50.state(), State::Open);
    let slow = Breaker::builder("lat-slow-exact")
        .window_calls(2)
        .min_calls(2)
        .slow(100 * MS, 50)
        .build()
        .unwrap();
    ok(&slow, 100 * MS).await.unwrap();
    ok(&slow, 100 * MS).await.unwrap();
    assert_eq!(
        slow.state(),
        State::Open,
        "`slow` counts a call at the bound"
    );
}
