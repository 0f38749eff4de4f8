//! `half_open_slow` through the attribute: the design card's breaker judges its trials by the
//! whole rule, and a warm-up bound lets a provider answering in 2 s pass them.

mod common;

use std::time::Duration;

use common::DepError;
use fusebox::{breaker, registry, State};
use tokio::time::advance;

#[breaker(
    name = "aho-card",
    trip_p95 = "500ms",
    half_open_pct = 5,
    half_open_window = "10s",
    open_for = "20s",
    timeout = "3s",
    window_calls = 20
)]
async fn card() -> Result<(), DepError> {
    tokio::time::sleep(Duration::from_secs(2)).await;
    Ok(())
}

#[breaker(
    name = "aho-warmup",
    trip_p95 = "500ms",
    half_open_slow = "3s",
    half_open_pct = 5,
    half_open_window = "10s",
    open_for = "20s",
    timeout = "3s",
    window_calls = 20
)]
async fn warmup() -> Result<(), DepError> {
    tokio::time::sleep(Duration::from_secs(2)).await;
    Ok(())
}

/// 20 slow calls open it; 20 s later one trial of 2 s runs; then the window ends.
async fn cycle<F: std::future::Future<Output = Result<(), DepError>>>(call: impl Fn() -> F) {
    for _ in 0..20 {
        let _ = call().await;
    }
    advance(Duration::from_secs(20)).await;
    let _ = call().await; // the trial: 2 s, answered
    advance(Duration::from_secs(10)).await;
    let _ = call().await; // judged now
}

#[tokio::test(start_paused = true)]
async fn a_two_second_trial_keeps_the_card_breaker_open_and_passes_a_warm_up_bound() {
    cycle(card).await;
    let b = registry().breaker("aho-card").unwrap();
    assert_eq!(b.state(), State::Open, "2 s trials are slow at 500 ms");
    cycle(warmup).await;
    let w = registry().breaker("aho-warmup").unwrap();
    assert_eq!(
        w.state(),
        State::Closed,
        "2 s is under the 3 s warm-up bound"
    );
    assert_eq!(w.config().half_open_slow(), Some(Duration::from_secs(3)));
}
