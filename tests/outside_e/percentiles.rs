//! Issue 2: percentiles over the window, not over the breaker's life.

use super::*;

#[tokio::test(start_paused = true)]
async fn latency_percentiles_cover_the_window_only() {
    let count = Breaker::builder("oe-pct-count")
        .window_calls(10)
        .failure_rate(100)
        .build()
        .unwrap();
    let time = Breaker::builder("oe-pct-time")
        .window(secs(10))
        .failure_rate(100)
        .build()
        .unwrap();
    for b in [&count, &time] {
        for _ in 0..10 {
            call_for(b, ms(800), true).await.unwrap();
        }
        assert!(b.metrics().p50.unwrap() >= ms(700), "{:?}", b.metrics().p50);
    }
    // The count window: the last 10 calls are fast.
    for _ in 0..10 {
        call_for(&count, ms(5), true).await.unwrap();
    }
    let m = count.metrics();
    assert!(
        m.p99.unwrap() < ms(100),
        "the slow calls left the last 10: {:?}",
        m.p99
    );
    // The time window: 20 s later nothing is left, then only fast calls.
    advance(secs(20)).await;
    let m = time.metrics();
    assert_eq!((m.window_calls, m.p50), (0, None), "{m:?}");
    for _ in 0..10 {
        call_for(&time, ms(5), true).await.unwrap();
    }
    let m = time.metrics();
    assert!(m.p99.unwrap() < ms(100), "{:?}", m.p99);
}
