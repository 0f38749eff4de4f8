//! The same slowdown on a paused clock, at rates below the 50 calls a second.

use super::*;

/// The dependency of the paused runs: answers after `delay`.
#[breaker(name = "outside-i-rate", key = rate, timeout = "2s", fallback = confirm_by_email)]
#[bulkhead(pool = 5, name = "outside-i-rate-pool")]
async fn verify_at_rate(rate: u64, delay: Duration) -> Result<Verification, PayError> {
    sleep(delay).await;
    Ok(Verification::Verified)
}

/// Behind a pool of 5, `rate` calls a second turn from 20 ms answers to 8 s ones: how long
/// until the timeout alone opens.
async fn opens_after_at(rate: u64) -> Option<Duration> {
    let start = Instant::now();
    let slow_at = HEALTHY;
    let mut tick = interval(Duration::from_secs(1) / rate as u32);
    let mut calls = Vec::new();
    let mut opened = None;
    while start.elapsed() < slow_at + secs(6) {
        tick.tick().await;
        let t = start.elapsed();
        let delay = if t < slow_at { ms(20) } else { secs(8) };
        calls.push(tokio::spawn(verify_at_rate(rate, delay)));
        let state = fusebox::registry()
            .breaker(&format!("outside-i-rate/{rate}"))
            .map(|b| b.state());
        if opened.is_none() && state == Some(State::Open) {
            opened = Some(t - slow_at);
        }
    }
    // The pool is shared by every rate: empty it before the next one.
    for c in calls {
        c.await.unwrap().unwrap();
    }
    opened
}

/// The row for the timeout alone (open within 3 s behind a pool of 5) does not hang
/// on the rate being exactly 50 calls a second: a loaded service sends fewer.
#[tokio::test(start_paused = true)]
async fn a_timeout_alone_behind_a_pool_of_5_opens_within_3_s_at_any_rate_from_30_to_50_a_second() {
    for rate in [50, 45, 40, 35, 30] {
        let opened = opens_after_at(rate).await;
        eprintln!("timeout alone, pool 5, {rate} calls/s: opened {opened:?} into the slowdown");
        let opened = opened.unwrap_or_else(|| panic!("{rate}/s: never opened"));
        assert!(
            opened <= secs(3),
            "{rate}/s: opened {opened:?} into the slowdown"
        );
    }
}
