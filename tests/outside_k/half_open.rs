//! Issues 2 and 15: half-open judged by the general slow rule, trials cut at a shorter
//! `half_open_timeout`, and the trials' share judged at the failure threshold.

use super::*;

// --- Issue 15: half-open judged by the general slow rule (`slow`, `slow_rate`) ---------------

/// The card's 2 s provider behind `slow = "500ms", slow_rate = 20` instead of `trip_p95`:
/// every answer is correct and under the 3 s timeout, but slow; half-open must not close on
/// it, and once the provider answers fast again the breaker closes.
#[tokio::test(start_paused = true)]
async fn half_open_judges_trials_by_the_general_slow_rule_too() {
    let b = Breaker::builder("ok-slow-rule")
        .window_calls(10)
        .min_calls(10)
        .slow(ms(500), 20)
        .timeout(secs(3))
        .open_for(secs(20))
        .half_open_pct(50)
        .half_open_window(secs(10))
        .build()
        .unwrap();
    let latency = Arc::new(std::sync::atomic::AtomicU64::new(2000));
    let traffic = {
        let b = b.clone();
        let latency = latency.clone();
        tokio::spawn(async move {
            loop {
                let b = b.clone();
                let l = ms(latency.load(SeqCst));
                tokio::spawn(async move { call_for(&b, l, true).await });
                sleep(ms(100)).await;
            }
        })
    };
    let start = tokio::time::Instant::now();
    while b.state() != State::Open {
        advance(ms(100)).await;
        assert!(start.elapsed() < secs(10), "the slow provider opens it");
    }
    let mut seen = Vec::new();
    for _ in 0..120 {
        advance(ms(500)).await;
        seen.push(b.state());
    }
    assert!(seen.contains(&State::HalfOpen), "half-open was tried");
    assert!(
        !seen.contains(&State::Closed),
        "60 s of 2 s answers never closed it: {seen:?}"
    );
    // It heals as the breaker opens again, so no trial of the slow provider is in the
    // window that judges it.
    while b.state() != State::Open {
        advance(ms(100)).await;
    }
    latency.store(10, SeqCst);
    let healed = tokio::time::Instant::now();
    while b.state() != State::Closed {
        advance(ms(100)).await;
        assert!(
            healed.elapsed() <= secs(20 + 10 + 1),
            "closed within one open period plus one half-open window of the healing"
        );
    }
    // It stays closed on the healthy provider.
    advance(secs(30)).await;
    traffic.abort();
    assert_eq!(b.state(), State::Closed);
}

// --- Issue 2 and DESIGN's table: a `half_open_timeout` shorter than `timeout` ----------------

#[breaker(
    name = "ok-short-trials",
    timeout = "3s",
    half_open_timeout = "200ms",
    window_calls = 2,
    min_calls = 2,
    open_for = "10s",
    half_open_calls = 1
)]
async fn short_trials(takes: Duration, ok: bool) -> Result<(), DepError> {
    sleep(takes).await;
    ok.then_some(()).ok_or(DepError::Down)
}

/// "Shorter to waste less": a trial is cut at `half_open_timeout` even though the call's own
/// `timeout` is longer, counts as failed and reopens the breaker; a quick trial closes it,
/// and closed calls run under `timeout` again.
#[tokio::test(start_paused = true)]
async fn a_half_open_timeout_shorter_than_timeout_cuts_trials_only() {
    for _ in 0..2 {
        let _ = short_trials(ms(1), false).await;
    }
    let b = registry().breaker("ok-short-trials").unwrap();
    assert_eq!(b.state(), State::Open);
    advance(secs(10)).await;
    let start = tokio::time::Instant::now();
    assert!(matches!(
        short_trials(secs(1), true).await,
        Err(DepError::Unavailable(Rejection::TimedOut { .. }))
    ));
    assert_eq!(start.elapsed(), ms(200), "cut at the trial timeout");
    assert_eq!(b.state(), State::Open, "a timed-out trial failed");
    advance(secs(10)).await;
    short_trials(ms(100), true).await.unwrap();
    assert_eq!(b.state(), State::Closed);
    short_trials(secs(1), true)
        .await
        .expect("closed: a 1 s call is within the 3 s timeout");
    assert_eq!(b.metrics().timed_out, 1);
}

// --- Issue 2: half-open's share judged against the failure threshold, at its boundary ---------

/// "Judges the trial calls' success rate against the failure threshold: close, or open
/// again", as the closed state judges: a failure rate at the threshold reopens, below it closes.
#[tokio::test(start_paused = true)]
async fn half_open_reopens_at_the_failure_threshold_and_closes_below_it() {
    let b = Breaker::builder("ok-share-edge")
        .window_calls(2)
        .min_calls(2)
        .failure_rate(50)
        .open_for(secs(5))
        .half_open_pct(100)
        .half_open_window(secs(10))
        .build()
        .unwrap();
    for _ in 0..2 {
        let _ = call_for(&b, ms(1), false).await;
    }
    assert_eq!(b.state(), State::Open);
    advance(secs(5)).await;
    // 1 failed of 2 trials: 50 %, at the threshold.
    call_for(&b, ms(1), true).await.unwrap();
    let _ = call_for(&b, ms(1), false).await;
    advance(secs(10)).await;
    let _ = call_for(&b, ms(1), true).await;
    assert_eq!(b.state(), State::Open, "50 % of the trials failed");
    advance(secs(5)).await;
    // 1 failed of 3 trials: 33 %, below.
    call_for(&b, ms(1), true).await.unwrap();
    call_for(&b, ms(1), true).await.unwrap();
    let _ = call_for(&b, ms(1), false).await;
    advance(secs(10)).await;
    call_for(&b, ms(1), true).await.unwrap();
    assert_eq!(b.state(), State::Closed, "33 % is below the threshold");
}
