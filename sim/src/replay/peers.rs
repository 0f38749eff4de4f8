//! The cold-start outage (replay 1) under the recovery policies of other libraries' defaults,
//! beside fusebox's: each modelled with the real fusebox breaker configured to behave that way,
//! so the reader sees what each library's out-of-the-box half-open would have done.
//!
//! The defaults, from each library's documentation:
//! - **Polly v8** `CircuitBreakerStrategyOptions`: `FailureRatio` 0.1, `MinimumThroughput` 100,
//!   `SamplingDuration` 30 s, `BreakDuration` 5 s; after the break "the first action" is the
//!   probe (<https://pollydocs.org/api/Polly.CircuitBreaker.CircuitBreakerStrategyOptions.html>).
//!   The break does not grow unless a `BreakDurationGenerator` is given.
//! - **gobreaker** `Settings`: `MaxRequests` 0 means 1 request in half-open, `Timeout` 0 means
//!   60 s open, the default `ReadyToTrip` trips after more than 5 consecutive failures
//!   (<https://github.com/sony/gobreaker>, README "Settings").
//! - **resilience4j** `CircuitBreakerConfig`: `failureRateThreshold` 50, `slidingWindowSize`
//!   100 (count-based), `minimumNumberOfCalls` 100, `waitDurationInOpenState` 60 s,
//!   `permittedNumberOfCallsInHalfOpenState` 10, and no timeout of its own for the trials
//!   (<https://resilience4j.readme.io/docs/circuitbreaker>, "Create and configure").
//! - **Semian**: in half-open "every available worker will attempt the half_open -> closed
//!   transition" (<https://github.com/Shopify/semian/issues/244>); `half_open_resource_timeout`
//!   defaults to none (the client's timeout applies), `success_threshold: 1` closes on one
//!   success, one error reopens; `error_threshold` and `error_timeout` have no defaults, so the
//!   README's example values (3 errors, 10 s) are used.
//!
//! Where fusebox cannot be told to behave exactly so, the nearest setting is named in the row:
//! `half_open_calls(10)` closes only when all ten trials succeed (resilience4j: under 50 %
//! failed), and "every worker probing, first answer decides" is a 100 % share judged after 1 ms.

use std::io;
use std::time::Duration;

use super::cold_start::{self, ColdStartSetup};
use crate::Report;
use fusebox_runtime::{Breaker, BreakerBuilder};

/// One recovery policy in the cold-start outage.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PeerRun {
    /// The library and the defaults it mimics, as the table shows it.
    pub label: &'static str,
    /// The run.
    pub report: Report,
    /// From the provider being up again until the breaker closed for good (`None`: not within
    /// the horizon).
    pub recovery: Option<Duration>,
    /// Times the breaker opened.
    pub times_opened: usize,
    /// Share of checkouts answered by the fallback after the provider was back.
    pub fallback_after: f64,
    /// Calls sent to the provider while it was down (probes into a dead dependency).
    pub sent_while_down: u64,
}

/// Every policy: see [`peers()`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Peers {
    /// fusebox first, then the write-up's own, then the peers.
    pub runs: Vec<PeerRun>,
}

const MS_800: Duration = Duration::from_millis(800);

fn base() -> BreakerBuilder {
    // The write-up's 800 ms call timeout for every policy: none of the peers adds one for trials.
    Breaker::builder("address-lookup").timeout(MS_800)
}

/// The policies, labelled with the defaults they mimic.
///
/// ```
/// let p = fusebox_sim::replay::peers::policies();
/// assert_eq!(p.len(), 8);
/// assert!(p.iter().all(|(_, b)| b.config().is_ok()));
/// ```
pub fn policies() -> Vec<(&'static str, BreakerBuilder)> {
    let s = Duration::from_secs;
    vec![
        (
            "fusebox: 5 % for 30 s, 4 s trial timeout, open 60 s",
            cold_start::new_breaker(),
        ),
        (
            "fusebox following it: + probe every 1 s, 5 s window, 5 s ramp",
            cold_start::follow_breaker(),
        ),
        ("fusebox defaults: timeout = 800ms and nothing else", base()),
        (
            "write-up: 1 probe, open 30 s doubling to 30 min",
            cold_start::old_breaker(),
        ),
        (
            "Polly v8: 1 probe, break 5 s, 10 % of >= 100 in 30 s",
            base()
                .window(s(30))
                .min_calls(100)
                .failure_rate(10)
                .open_for(s(5))
                .half_open_calls(1),
        ),
        (
            "gobreaker: 1 probe, open 60 s, > 5 consecutive failures",
            base()
                .window_calls(6)
                .min_calls(6)
                .failure_rate(100)
                .open_for(s(60))
                .half_open_calls(1),
        ),
        (
            "resilience4j: 10 trial calls, open 60 s, 50 % of 100",
            base()
                .window_calls(100)
                .min_calls(100)
                .failure_rate(50)
                .open_for(s(60))
                .half_open_calls(10),
        ),
        (
            "Semian: every worker probes, 1st answer decides, 3 errors, 10 s",
            base()
                .window_calls(3)
                .min_calls(3)
                .failure_rate(100)
                .open_for(s(10))
                .half_open_pct(100)
                .half_open_window(Duration::from_millis(1)),
        ),
    ]
}

/// Runs every policy against the cold-start provider.
///
/// ```no_run
/// use fusebox_sim::replay::{cold_start::ColdStartSetup, peers::peers};
/// let p = peers(&ColdStartSetup::default()).unwrap();
/// assert!(p.runs[0].recovery.unwrap().as_secs() < 120);
/// ```
pub fn peers(setup: &ColdStartSetup) -> io::Result<Peers> {
    let mut runs = Vec::new();
    for (label, breaker) in policies() {
        let (report, recovery) = cold_start::run_one(setup, &breaker)?;
        let times_opened = report.breakers.first().map_or(0, |t| t.times_opened());
        let fallback_after = cold_start::fallback_after(&report);
        let sent_while_down = report.window("down").map_or(0, |w| w.counts.sent);
        runs.push(PeerRun {
            label,
            sent_while_down,
            report,
            recovery,
            times_opened,
            fallback_after,
        });
    }
    Ok(Peers { runs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusebox_recovers_within_two_minutes_and_the_lone_doubling_probe_takes_hours() {
        let p = peers(&ColdStartSetup::default()).unwrap();
        let by = |prefix: &str| p.runs.iter().find(|r| r.label.starts_with(prefix)).unwrap();
        assert!(by("fusebox").recovery.unwrap() <= Duration::from_secs(120));
        assert!(by("write-up")
            .recovery
            .is_none_or(|r| r > Duration::from_secs(3600)));
        // One probe a minute feeds the cold provider one request a minute: many minutes.
        assert!(by("gobreaker").recovery.unwrap() > Duration::from_secs(5 * 60));
        // Short breaks (Polly) and every worker probing (Semian) warm this provider fast: it
        // needs only about a dozen requests. Their price shows where a dependency stays
        // down or slow (replay 4: probes holding every worker).
        assert!(by("Polly").recovery.unwrap() < Duration::from_secs(120));
        assert!(by("Semian").recovery.unwrap() < Duration::from_secs(120));
    }
}
