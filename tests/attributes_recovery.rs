//! Issue 22 through the attribute: `probe_every` and `ramp` on an annotated client, with a
//! typed fallback answering the calls the ramp still refuses.

mod common;

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;

use common::DepError;
use fusebox::{breaker, bulkhead, registry, Error, State};
use tokio::time::advance;

static DOWN: AtomicBool = AtomicBool::new(false);

#[derive(Debug, PartialEq)]
enum Answer {
    Verified,
    ByEmail,
}

fn by_email(_: Error<DepError>) -> Result<Answer, DepError> {
    Ok(Answer::ByEmail)
}

#[breaker(
    name = "ar-payments",
    window_calls = 4,
    min_calls = 4,
    open_for = "30s",
    probe_every = "1s",
    half_open_calls = 1,
    ramp = "10s",
    fallback = by_email
)]
async fn verify() -> Result<Answer, DepError> {
    tokio::time::sleep(Duration::from_millis(20)).await;
    if DOWN.load(Relaxed) {
        Err(DepError::Down)
    } else {
        Ok(Answer::Verified)
    }
}

#[tokio::test(start_paused = true)]
async fn a_probe_finds_the_recovery_and_the_ramp_lets_traffic_back_gradually() {
    DOWN.store(true, Relaxed);
    for _ in 0..4 {
        assert_eq!(verify().await, Ok(Answer::ByEmail));
    }
    let b = registry().breaker("ar-payments").unwrap();
    assert_eq!(b.state(), State::Open);
    assert_eq!(b.config().probe_every(), Some(Duration::from_secs(1)));
    // Back after 3 s: the first probe after that closes it (one trial is all it asks for).
    advance(Duration::from_secs(3)).await;
    DOWN.store(false, Relaxed);
    advance(Duration::from_secs(1)).await;
    assert_eq!(
        verify().await,
        Ok(Answer::Verified),
        "the probe's caller is answered"
    );
    assert_eq!(
        b.state(),
        State::Closed,
        "26 s before open_for would have ended"
    );
    // Ramping from 5 %: most callers are told "by email" for now, none sees an error.
    let answers: Vec<_> = calls(20).await;
    let verified = answers.iter().filter(|a| **a == Answer::Verified).count();
    assert!((1..=3).contains(&verified), "{verified} of 20 let through");
    assert!(b.metrics().ramp_share.is_some());
    advance(Duration::from_secs(10)).await;
    let answers = calls(20).await;
    assert!(answers.iter().all(|a| *a == Answer::Verified));
    assert_eq!(b.metrics().ramp_share, None);
}

/// `n` calls one after the other.
async fn calls(n: usize) -> Vec<Answer> {
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(verify().await.unwrap());
    }
    out
}

static QUOTES_DOWN: AtomicBool = AtomicBool::new(false);

#[breaker(
    name = "ar-quotes",
    window_calls = 4,
    min_calls = 4,
    open_for = "30s",
    probe_every = "1s",
    half_open_calls = 1,
    ramp = "10s"
)]
#[bulkhead(name = "ar-quotes-pool", limit = "adaptive", pool = 8, max_pool = 16)]
async fn quote() -> Result<u32, DepError> {
    tokio::time::sleep(Duration::from_millis(5)).await;
    if QUOTES_DOWN.load(Relaxed) {
        Err(DepError::Down)
    } else {
        Ok(42)
    }
}

#[tokio::test(start_paused = true)]
async fn probes_and_the_ramp_take_bulkhead_slots_only_for_the_calls_they_let_through() {
    QUOTES_DOWN.store(true, Relaxed);
    for _ in 0..4 {
        assert_eq!(quote().await, Err(DepError::Down));
    }
    let b = registry().breaker("ar-quotes").unwrap();
    let pool = registry().bulkhead("ar-quotes-pool").unwrap();
    assert_eq!(b.state(), State::Open);
    let admitted = |p: &fusebox::Bulkhead| p.metrics().admitted;
    let before = admitted(&pool);
    // Ten refusals and one probe a second for five seconds, still down.
    for _ in 0..5 {
        for _ in 0..10 {
            let _ = quote().await;
        }
        advance(Duration::from_secs(1)).await;
    }
    assert_eq!(admitted(&pool) - before, 4, "only the probes took a slot");
    assert_eq!(b.state(), State::Open);
    QUOTES_DOWN.store(false, Relaxed);
    assert_eq!(quote().await, Ok(42), "the probe passes");
    assert_eq!(b.state(), State::Closed);
    let before = admitted(&pool);
    let mut answered = 0;
    for _ in 0..100 {
        if quote().await.is_ok() {
            answered += 1;
        }
    }
    assert_eq!(
        admitted(&pool) - before,
        answered,
        "refused by the ramp: no slot"
    );
    assert!(
        (1..=10).contains(&answered),
        "{answered} of 100 at the ramp's start"
    );
    assert!(pool.metrics().adaptive.is_some());
}

/// Seed 002's payment service: 80 ms usually, then 8 s, under the write-up's 30 s timeout.
static SLOW: AtomicBool = AtomicBool::new(false);

#[breaker(name = "ar-usual", timeout = "30s", fallback = by_email)]
async fn verify_usual() -> Result<Answer, DepError> {
    let ms = if SLOW.load(Relaxed) { 8000 } else { 80 };
    tokio::time::sleep(Duration::from_millis(ms)).await;
    Ok(Answer::Verified)
}

#[tokio::test(start_paused = true)]
async fn a_timeout_alone_learns_the_usual_latency_and_opens_on_answers_a_hundred_times_slower() {
    // 20 checkouts a second, each its own task, as a service's requests arrive.
    let arrive = |secs: u64| async move {
        for _ in 0..secs * 20 {
            tokio::spawn(verify_usual());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    arrive(10).await;
    let b = registry().breaker("ar-usual").unwrap();
    let m = b.metrics();
    // The usual latency is an estimate of the answers' 90th percentile: about 80 ms.
    let usual = m.usual_latency.expect("learned from 200 answers");
    let ms = Duration::from_millis;
    assert!(usual >= ms(75) && usual <= ms(95), "{usual:?}");
    assert_eq!(m.slow_bound, Some(usual * 5));
    let text = fusebox::metrics::prometheus();
    let line = format!(
        "fusebox_breaker_usual_latency_seconds{{breaker=\"ar-usual\"}} {}",
        usual.as_secs_f64()
    );
    assert!(text.contains(&line), "{line} not in:\n{text}");
    assert_eq!(b.config().slow().unwrap().bound, Duration::from_secs(15));
    SLOW.store(true, Relaxed);
    let slow_at = tokio::time::Instant::now();
    while b.state() == State::Closed {
        assert!(slow_at.elapsed() < Duration::from_secs(4), "still closed");
        tokio::spawn(verify_usual());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Open: checkout is answered by email at once while the service is slow.
    assert_eq!(verify_usual().await, Ok(Answer::ByEmail));
    arrive(60).await;
    assert_ne!(b.state(), State::Closed, "closed again while slow");
}
