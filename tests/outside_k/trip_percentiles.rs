//! Issue 2 and DESIGN's table: `trip_pNN` is the slow rule with rate 100 - NN.

use super::*;

#[breaker(
    name = "ok-p99",
    window_calls = 100,
    min_calls = 100,
    trip_p99 = "100ms"
)]
async fn p99_call(takes: Duration) -> Result<(), DepError> {
    sleep(takes).await;
    Ok(())
}

#[breaker(name = "ok-p50", window_calls = 10, min_calls = 10, trip_p50 = "100ms")]
async fn p50_call(takes: Duration) -> Result<(), DepError> {
    sleep(takes).await;
    Ok(())
}

/// `trip_p99 = "100ms"` opens when more than 1 % of the window is slower than 100 ms: one
/// slow call of 100 is exactly 1 % (the p99 is not above the bound), two are 2 %.
#[tokio::test(start_paused = true)]
async fn trip_p99_opens_on_more_than_one_percent_slow() {
    for _ in 0..99 {
        p99_call(ms(1)).await.unwrap();
    }
    p99_call(ms(150)).await.unwrap();
    let b = registry().breaker("ok-p99").unwrap();
    assert_eq!(b.state(), State::Closed, "1 slow of 100: the p99 is 1 ms");
    p99_call(ms(150)).await.unwrap();
    assert_eq!(b.state(), State::Open, "2 slow of 100: the p99 is 150 ms");
    assert_eq!(b.metrics().slow, 2);
}

/// `trip_p50 = "100ms"` opens when more than half the window is slower than 100 ms.
#[tokio::test(start_paused = true)]
async fn trip_p50_opens_on_more_than_half_slow() {
    for _ in 0..5 {
        p50_call(ms(1)).await.unwrap();
    }
    for _ in 0..5 {
        p50_call(ms(150)).await.unwrap();
    }
    let b = registry().breaker("ok-p50").unwrap();
    assert_eq!(
        b.state(),
        State::Closed,
        "5 slow of 10: the median is not above"
    );
    p50_call(ms(150)).await.unwrap();
    assert_eq!(b.state(), State::Open, "6 slow of the last 10");
}

/// The builder's `trip_p90` is the same rule with rate 10.
#[tokio::test(start_paused = true)]
async fn trip_p90_opens_on_more_than_ten_percent_slow() {
    let b = Breaker::builder("ok-p90")
        .window_calls(10)
        .min_calls(10)
        .trip_p90(ms(100))
        .build()
        .unwrap();
    for _ in 0..9 {
        call_for(&b, ms(1), true).await.unwrap();
    }
    call_for(&b, ms(150), true).await.unwrap();
    assert_eq!(b.state(), State::Closed, "1 slow of 10 is 10 %, not more");
    call_for(&b, ms(150), true).await.unwrap();
    assert_eq!(b.state(), State::Open);
}
