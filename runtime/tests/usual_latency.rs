//! A breaker given only its `timeout` learns the dependency's usual latency and counts a call
//! slow from five times it (`breaker/usual.rs`): seed 002's payment service, 80 ms usually and
//! 8 s while sick under a 30 s timeout, opens it within seconds, keeps it open while slow and
//! lets it close once fast; a healthy dependency of any shape never opens it. Open-loop callers
//! on a paused clock, as a service's requests arrive whether or not the last one was answered.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fusebox_runtime::{Breaker, Error, State};
use tokio::time::{interval, sleep, Instant, MissedTickBehavior};

const MS: Duration = Duration::from_millis(1);
const SEC: Duration = Duration::from_secs(1);

/// A small deterministic generator (no dependency, the same draws every run).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in `lo..hi`.
    fn between(&mut self, lo: Duration, hi: Duration) -> Duration {
        lo + (hi - lo).mul_f64(self.next())
    }
}

/// Every state the breaker went through, with when, as the arrivals saw it.
type Seen = Arc<Mutex<Vec<(Duration, State)>>>;

/// One call every `every` for `span`, each its own task answering after `latency(t, rng)` (its
/// arrival time since the start); returns the states seen at each arrival.
async fn arrivals(
    b: &Breaker,
    every: Duration,
    span: Duration,
    mut latency: impl FnMut(Duration, &mut Lcg) -> Duration,
) -> Vec<(Duration, State)> {
    let seen: Seen = Arc::default();
    let start = Instant::now();
    let mut rng = Lcg(17);
    let mut tick = interval(every);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let t = start.elapsed();
        if t >= span {
            break;
        }
        let l = latency(t, &mut rng);
        let b2 = b.clone();
        tokio::spawn(async move {
            let _: Result<(), Error<()>> = b2
                .call(async move {
                    sleep(l).await;
                    Ok(())
                })
                .await;
        });
        let s = b.state();
        let mut seen = seen.lock().unwrap();
        if seen.last().map(|(_, last)| *last) != Some(s) {
            seen.push((t, s));
        }
    }
    let seen = seen.lock().unwrap().clone();
    seen
}

/// The first time at or after `from` the breaker was seen in `state`.
fn first(seen: &[(Duration, State)], state: State, from: Duration) -> Option<Duration> {
    seen.iter()
        .find(|(t, s)| *t >= from && *s == state)
        .map(|(t, _)| *t)
}

#[tokio::test(start_paused = true)]
async fn seed_002_a_timeout_alone_opens_on_answers_a_hundred_times_slower_and_closes_once_fast() {
    let b = Breaker::builder("usual-seed-002")
        .timeout(Duration::from_secs(30))
        .build_detached()
        .unwrap();
    let (slow_at, healed_at) = (60 * SEC, 180 * SEC);
    let seen = arrivals(&b, 50 * MS, 240 * SEC, |t, rng| {
        if t >= slow_at && t < healed_at {
            rng.between(7500 * MS, 8500 * MS)
        } else {
            rng.between(60 * MS, 100 * MS)
        }
    })
    .await;
    // 20 calls a second: half of the last 100 past five times the usual ~95 ms.
    let opened = first(&seen, State::Open, slow_at).expect("never opened");
    assert!(
        opened - slow_at <= 3500 * MS,
        "opened {:?} in: {seen:?}",
        opened - slow_at
    );
    assert!(
        !seen
            .iter()
            .any(|(t, s)| *s == State::Closed && *t > opened && *t < healed_at),
        "closed while slow: {seen:?}"
    );
    // Back within a probe's backed-off interval (an eighth of the ~2 minutes away, after the
    // 8 s answer of a probe sent while still slow) and the 2 s half-open window.
    let closed = first(&seen, State::Closed, healed_at).expect("never closed after healing");
    assert!(
        closed - healed_at <= 30 * SEC,
        "closed {:?} after healing: {seen:?}",
        closed - healed_at
    );
    let m = b.metrics();
    let usual = m.usual_latency.expect("learned");
    assert!(usual >= 70 * MS && usual <= 115 * MS, "{usual:?}");
    assert_eq!(m.slow_bound, Some(usual * 5));
}

#[tokio::test(start_paused = true)]
async fn a_healthy_dependency_of_any_shape_never_opens_it() {
    // Nine calls in ten from a cache (2 ms), one in ten from the disk (40-80 ms), one in two
    // hundred stuck a second: an hour at 20 calls a second under a 10 s timeout.
    let b = Breaker::builder("usual-bimodal")
        .timeout(Duration::from_secs(10))
        .build_detached()
        .unwrap();
    let seen = arrivals(&b, 50 * MS, 3600 * SEC, |_, rng| {
        let x = rng.next();
        if x < 0.005 {
            SEC
        } else if x < 0.1 {
            rng.between(40 * MS, 80 * MS)
        } else {
            2 * MS
        }
    })
    .await;
    assert_eq!(seen, vec![(Duration::ZERO, State::Closed)]);
    assert!(b.metrics().usual_latency.is_some());
}

#[tokio::test(start_paused = true)]
async fn a_slowdown_that_comes_gradually_is_learned_and_never_opens_it() {
    // From 50 ms to 2 s over ten minutes (under a 30 s timeout): each step is the usual.
    let b = Breaker::builder("usual-gradual")
        .timeout(Duration::from_secs(30))
        .build_detached()
        .unwrap();
    let seen = arrivals(&b, 50 * MS, 660 * SEC, |t, rng| {
        let grown = 1.0 + 39.0 * (t.as_secs_f64() / 600.0).min(1.0);
        rng.between(45 * MS, 55 * MS).mul_f64(grown)
    })
    .await;
    assert_eq!(seen, vec![(Duration::ZERO, State::Closed)]);
    let usual = b.metrics().usual_latency.unwrap();
    assert!(usual >= SEC, "{usual:?}");
}

#[tokio::test(start_paused = true)]
async fn fewer_than_a_window_of_answers_teach_nothing() {
    // Fifty fast answers, then 300 ms ones: the usual latency is not learned yet, and 300 ms
    // is under half the 10 s timeout.
    let b = Breaker::builder("usual-cold")
        .timeout(Duration::from_secs(10))
        .build_detached()
        .unwrap();
    let seen = arrivals(&b, 50 * MS, 30 * SEC, |t, _| {
        if t < 2500 * MS {
            10 * MS
        } else {
            300 * MS
        }
    })
    .await;
    assert_eq!(seen, vec![(Duration::ZERO, State::Closed)]);
    // By the hundredth answer the estimate had followed them: 300 ms is the usual.
    let usual = b.metrics().usual_latency.unwrap();
    assert!(usual >= 250 * MS, "{usual:?}");
}

#[tokio::test(start_paused = true)]
async fn a_reset_forgets_a_dependency_that_became_slower_for_good() {
    let b = Breaker::builder("usual-for-good")
        .timeout(Duration::from_secs(30))
        .build_detached()
        .unwrap();
    let slow_from = 30 * SEC;
    let lat = move |t: Duration, rng: &mut Lcg| {
        if t < slow_from {
            rng.between(60 * MS, 100 * MS)
        } else {
            rng.between(1800 * MS, 2200 * MS)
        }
    };
    // 2 s answers, twenty times the usual: open, and held open while they last.
    let seen = arrivals(&b, 50 * MS, 120 * SEC, lat).await;
    let opened = first(&seen, State::Open, slow_from).expect("never opened");
    assert!(opened - slow_from <= 5 * SEC, "{seen:?}");
    assert!(
        !seen.iter().any(|(t, s)| *s == State::Closed && *t > opened),
        "{seen:?}"
    );
    // The operator's reset forgets the usual: the next hundred answers are the usual.
    b.reset();
    assert_eq!(b.metrics().usual_latency, None);
    let seen = arrivals(&b, 50 * MS, 120 * SEC, |_, rng| {
        rng.between(1800 * MS, 2200 * MS)
    })
    .await;
    assert_eq!(seen, vec![(Duration::ZERO, State::Closed)]);
    let usual = b.metrics().usual_latency.unwrap();
    assert!(usual >= 1800 * MS, "{usual:?}");
}

#[tokio::test(start_paused = true)]
async fn a_slow_rule_given_is_judged_by_its_own_bound_only() {
    // `trip_p95` is the user's own bound: nothing is learned, and 300 ms answers (six times
    // the usual, under the 500 ms bound) never open it.
    let b = Breaker::builder("usual-given")
        .timeout(Duration::from_secs(30))
        .trip_p95(500 * MS)
        .build_detached()
        .unwrap();
    let seen = arrivals(&b, 50 * MS, 60 * SEC, |t, rng| {
        if t < 20 * SEC {
            rng.between(40 * MS, 60 * MS)
        } else {
            rng.between(280 * MS, 320 * MS)
        }
    })
    .await;
    assert_eq!(seen, vec![(Duration::ZERO, State::Closed)]);
    let m = b.metrics();
    assert_eq!((m.usual_latency, m.slow_bound), (None, Some(500 * MS)));
}
