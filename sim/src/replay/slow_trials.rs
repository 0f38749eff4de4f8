//! Replay 5, issue 15: slow *under* the timeout. A payment provider answers every call
//! correctly in 2 s, under the 3 s timeout, at 100 calls/s, with the design card's settings
//! (`trip_p95 = "500ms"`, `half_open_pct = 5`, `half_open_window = "10s"`, `open_for = "20s"`).
//! The breaker opens on latency; what matters is whether half-open lets the whole load back on.
//! Judged on failures only, 2 s trials pass and it closes once per open period; judged by the
//! whole rule, as fusebox does, it stays open until the provider is fast again.

use std::io;
use std::time::Duration;

use crate::{Call, Dependency, Latency, Phase, Report, Route, Server};
use fusebox_runtime::{Breaker, BreakerBuilder, State};

/// Parameters of the slow-under-the-timeout replay.
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::replay::slow_trials::SlowTrialsSetup;
/// assert_eq!(SlowTrialsSetup::default().answer, Duration::from_secs(2));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SlowTrialsSetup {
    /// Payment calls per second.
    pub rate: f64,
    /// The provider's answer time while slow (under the 3 s timeout).
    pub answer: Duration,
    /// How long it stays slow.
    pub slow_for: Duration,
}

impl Default for SlowTrialsSetup {
    fn default() -> Self {
        SlowTrialsSetup {
            rate: 100.0,
            answer: Duration::from_secs(2),
            slow_for: Duration::from_secs(100),
        }
    }
}

/// What one configuration did: see [`run_one`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SlowTrialsRun {
    /// The run.
    pub report: Report,
    /// From the slowdown until the breaker first opened.
    pub trip_after: Option<Duration>,
    /// Times the breaker closed while the provider was slow (each one lets the whole load on).
    pub closed_while_slow: usize,
    /// Calls that reached the slow provider after the first trip.
    pub sent_while_open: u64,
    /// From the provider being fast again until the breaker closed for good.
    pub recovery: Option<Duration>,
}

/// Both configurations: see [`slow_trials()`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SlowTrials {
    /// When the provider was fast again, since the start of the run.
    pub healed_at: Duration,
    /// Trials judged on failures only (what half-open did before issue 15; here
    /// `half_open_slow` = the 3 s timeout, so a trial is slow only when it times out).
    pub failures_only: SlowTrialsRun,
    /// Trials judged by the whole rule: failure rate and p95 > 500 ms.
    pub whole_rule: SlowTrialsRun,
    /// The whole rule with a probe every second while open (issue 22): a 2 s probe is slow
    /// by the trial bound, so it never starts half-open early.
    pub probing: SlowTrialsRun,
}

const SLOW_AT: Duration = Duration::from_secs(30);

/// The design card's breaker: fusebox judges its trials by the whole rule.
///
/// ```
/// use std::time::Duration;
/// let c = fusebox_sim::replay::slow_trials::card_breaker().config().unwrap();
/// assert_eq!(c.half_open_slow(), Some(Duration::from_millis(500)));
/// ```
pub fn card_breaker() -> BreakerBuilder {
    Breaker::builder("payments")
        .trip_p95(Duration::from_millis(500))
        .half_open_pct(5)
        .half_open_window(Duration::from_secs(10))
        .open_for(Duration::from_secs(20))
        .timeout(Duration::from_secs(3))
}

/// The same breaker with trials judged on failures only: a trial is slow only at the timeout.
///
/// ```
/// use std::time::Duration;
/// let c = fusebox_sim::replay::slow_trials::failures_only_breaker().config().unwrap();
/// assert_eq!(c.half_open_slow(), Some(Duration::from_secs(3)));
/// ```
pub fn failures_only_breaker() -> BreakerBuilder {
    card_breaker().half_open_slow(Duration::from_secs(3))
}

/// The design card's breaker probing every second while open (issue 22).
///
/// ```
/// use std::time::Duration;
/// let c = fusebox_sim::replay::slow_trials::probing_breaker().config().unwrap();
/// assert_eq!(c.probe_every(), Some(Duration::from_secs(1)));
/// ```
pub fn probing_breaker() -> BreakerBuilder {
    card_breaker().probe_every(Duration::from_secs(1))
}

/// Runs one configuration against the provider.
///
/// ```
/// use fusebox_sim::replay::slow_trials::{card_breaker, run_one, SlowTrialsSetup};
/// let mut setup = SlowTrialsSetup::default();
/// setup.rate = 20.0; // a fifth of the traffic: the same shape, faster
/// let run = run_one(&setup, &card_breaker()).unwrap();
/// assert_eq!(run.closed_while_slow, 0);
/// ```
pub fn run_one(setup: &SlowTrialsSetup, breaker: &BreakerBuilder) -> io::Result<SlowTrialsRun> {
    let ms = Duration::from_millis;
    let healed = SLOW_AT + setup.slow_for;
    let end = healed + Duration::from_secs(90);
    let provider = Dependency::builder("payments", Latency::uniform(ms(60), ms(100)))
        .phase(SLOW_AT, Phase::Slow(Latency::fixed(setup.answer)))
        .phase(healed, Phase::Healthy)
        .build();
    let b = breaker.build_detached().map_err(io::Error::other)?;
    // Enough workers for the full load at 2 s: the pool is not what this replay is about.
    let workers = (setup.rate * 4.0).ceil() as usize;
    let report = Server::new(workers)
        .route(Route::new("checkout", setup.rate).call(Call::new(&provider).breaker(&b)))
        .window("normal", Duration::ZERO, SLOW_AT)
        .window("slow", SLOW_AT, healed)
        .window("fast again", healed, end)
        .sample_every(Duration::from_secs(2))
        .run_for(end)?;
    let t = report.breaker("payments");
    let trip = t.and_then(|t| t.first_open_after(SLOW_AT));
    let closed_while_slow = t.map_or(0, |t| {
        t.transitions
            .iter()
            .filter(|(at, s)| *s == State::Closed && *at > SLOW_AT && *at < healed)
            .count()
    });
    let sent_while_open = match trip {
        // Calls sent in the slow window minus those before the trip (the rate is steady).
        Some(at) => {
            let sent = report.window("slow").map_or(0, |w| w.counts.sent);
            let before = ((at - SLOW_AT).as_secs_f64() * setup.rate).round() as u64;
            sent.saturating_sub(before)
        }
        None => 0,
    };
    Ok(SlowTrialsRun {
        trip_after: trip.filter(|at| *at < healed).map(|at| at - SLOW_AT),
        closed_while_slow,
        sent_while_open,
        recovery: t.and_then(|t| t.recovery_after(healed)),
        report,
    })
}

/// Runs both configurations.
///
/// ```no_run
/// use fusebox_sim::replay::slow_trials::{slow_trials, SlowTrialsSetup};
/// let s = slow_trials(&SlowTrialsSetup::default()).unwrap();
/// assert!(s.failures_only.closed_while_slow > 0);
/// assert_eq!(s.whole_rule.closed_while_slow, 0);
/// ```
pub fn slow_trials(setup: &SlowTrialsSetup) -> io::Result<SlowTrials> {
    Ok(SlowTrials {
        healed_at: SLOW_AT + setup.slow_for,
        failures_only: run_one(setup, &failures_only_breaker())?,
        whole_rule: run_one(setup, &card_breaker())?,
        probing: run_one(setup, &probing_breaker())?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_p95_breaker_stays_open_while_slow_and_closes_soon_after() {
        let s = slow_trials(&SlowTrialsSetup::default()).unwrap();
        let w = &s.whole_rule;
        assert!(w.trip_after.unwrap() < Duration::from_secs(2), "{w:?}");
        assert_eq!(w.closed_while_slow, 0);
        // It heals while open: closed by the end of the next half-open window.
        let bound = Duration::from_secs(20 + 10);
        assert!(w.recovery.unwrap() <= bound, "{:?}", w.recovery);
        let f = &s.failures_only;
        assert!(f.closed_while_slow >= 3, "{:?}", f.report.breakers);
        assert!(
            f.sent_while_open > 2 * w.sent_while_open,
            "failures only let the load back on: {} vs {}",
            f.sent_while_open,
            w.sent_while_open
        );
    }

    #[test]
    fn probing_never_closes_early_on_a_provider_slow_under_its_timeout() {
        let s = slow_trials(&SlowTrialsSetup::default()).unwrap();
        let (p, w) = (&s.probing, &s.whole_rule);
        assert_eq!(p.closed_while_slow, 0, "{:?}", p.report.breakers);
        // The probes did reach it (about one a second), and were judged slow each time.
        assert!(
            p.sent_while_open >= w.sent_while_open + 50,
            "{} vs {}",
            p.sent_while_open,
            w.sent_while_open
        );
        let opened_while_slow =
            |r: &SlowTrialsRun| r.report.breaker("payments").map_or(0, |t| t.times_opened());
        assert_eq!(
            opened_while_slow(p),
            opened_while_slow(w),
            "no extra half-open episode"
        );
        // Fast again, the next probe passes: closed sooner than at the end of an open period.
        let fast = p.recovery.unwrap();
        assert!(fast <= Duration::from_secs(1 + 10 + 1), "{fast:?}");
        assert!(fast <= w.recovery.unwrap(), "{fast:?} vs {:?}", w.recovery);
    }
}
