//! Replay 1, `seeds/cold-start-recovery.txt`: a two-minute outage that lasted three hours,
//! because a lone trial request kept meeting a provider that only warms by receiving requests.

use std::io;
use std::time::Duration;

use crate::{Call, Dependency, Latency, Phase, Report, Route, Server};
use fusebox_runtime::{Breaker, BreakerBuilder};

/// Parameters of the cold-start replay.
///
/// ```
/// use fusebox_sim::replay::cold_start::ColdStartSetup;
/// let mut setup = ColdStartSetup::default();
/// setup.warm_after = 30; // a provider that needs more traffic to warm up
/// assert_eq!(setup.rate, 10.0);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ColdStartSetup {
    /// Address validations per second at checkout.
    pub rate: f64,
    /// Requests the provider must receive after its restart before it is warm. Calibrated on
    /// the write-up (its lone trials needed about nine tries); the old configuration takes
    /// hours for any value from about 6 up, the new one minutes for any value up to about 60.
    pub warm_after: u64,
    /// Seed of the provider's latency draws.
    pub seed: u64,
    /// Longest virtual time simulated.
    pub horizon: Duration,
}

impl Default for ColdStartSetup {
    fn default() -> Self {
        ColdStartSetup {
            rate: 10.0,
            warm_after: 12,
            seed: 1,
            horizon: Duration::from_secs(8 * 3600),
        }
    }
}

/// What the cold-start replay measured: see [`cold_start()`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ColdStart {
    /// When the provider was healthy again (cold), since the start of the run.
    pub up_again: Duration,
    /// The write-up's configuration: one trial, open 30 s doubling to 30 min, 800 ms for trials too.
    pub old: Report,
    /// fusebox's: 5 % of traffic for 30 s, 4 s trial timeout, open 60 s, no doubling.
    pub new: Report,
    /// Recovery time of the old configuration (`None`: not recovered within the horizon).
    pub old_recovery: Option<Duration>,
    /// Recovery time of the new configuration.
    pub new_recovery: Option<Duration>,
    /// Calls the provider received between being up again and the old breaker closing.
    pub old_trials: u64,
    /// fusebox following the provider back (issue 22): [`follow_breaker`], probing while
    /// open and ramping traffic back in.
    pub follow: Report,
    /// Recovery time of the follow configuration: until it closed for good, which starts its
    /// ramp; all traffic is back [`FOLLOW_RAMP`] later ([`follow_full_traffic`](Self::follow_full_traffic)).
    pub follow_recovery: Option<Duration>,
    /// From the provider being up again until the follow configuration admits every call.
    pub follow_full_traffic: Option<Duration>,
    /// Times the breaker opened again after the provider was back (new, follow).
    pub relapses: (usize, usize),
    /// Share of checkouts answered by the fallback after the provider was back (new, follow).
    pub fallback_after: (f64, f64),
}

const OUTAGE_AT: Duration = Duration::from_secs(60);
const DOWN_FOR: Duration = Duration::from_secs(120);

/// The write-up's breaker: half of the last twenty calls open it; 30 s open, doubling up to
/// 30 minutes; one trial request under the normal 800 ms timeout.
///
/// ```
/// use std::time::Duration;
/// let c = fusebox_sim::replay::cold_start::old_breaker().config().unwrap();
/// assert_eq!(c.half_open_timeout(), Some(Duration::from_millis(800)));
/// assert_eq!(c.open_period(6), Duration::from_secs(1800));
/// ```
pub fn old_breaker() -> BreakerBuilder {
    Breaker::builder("address-lookup")
        .window_calls(20)
        .failure_rate(50)
        .timeout(Duration::from_millis(800))
        .open_for(Duration::from_secs(30))
        .backoff(2.0, Duration::from_secs(30 * 60))
        .half_open_calls(1)
}

/// The write-up's fix, in fusebox's terms: half-open admits 5 % of traffic for 30 s and judges
/// the success rate; trials get a longer timeout; the open period is 60 s and never doubles.
///
/// ```
/// use std::time::Duration;
/// let c = fusebox_sim::replay::cold_start::new_breaker().config().unwrap();
/// assert_eq!(c.half_open_timeout(), Some(Duration::from_secs(4)));
/// assert_eq!(c.open_period(6), Duration::from_secs(60));
/// ```
pub fn new_breaker() -> BreakerBuilder {
    Breaker::builder("address-lookup")
        .window_calls(20)
        .failure_rate(50)
        .timeout(Duration::from_millis(800))
        .half_open_timeout(Duration::from_secs(4))
        .half_open_pct(5)
        .half_open_window(Duration::from_secs(30))
        .open_for(Duration::from_secs(60))
}

/// fusebox's breaker that follows the provider back (issue 22): `new_breaker()` plus a probe
/// every second while open, a 5 s half-open window, and a 5 s ramp from 5 % to all traffic.
/// The probe finds the provider up within a second of its return (a cold answer of 1.5–3 s
/// passes under the 4 s trial timeout), half-open judges 5 s of trials, and the ramp lets the
/// load back gradually while the provider warms.
///
/// ```
/// use std::time::Duration;
/// let c = fusebox_sim::replay::cold_start::follow_breaker().config().unwrap();
/// assert_eq!(c.probe_every(), Some(Duration::from_secs(1)));
/// assert_eq!(c.ramp(), Some(Duration::from_secs(5)));
/// ```
pub fn follow_breaker() -> BreakerBuilder {
    new_breaker()
        .probe_every(Duration::from_secs(1))
        .half_open_window(Duration::from_secs(5))
        .ramp(FOLLOW_RAMP)
}

/// The follow configuration's ramp: all traffic is back this long after it closes.
pub const FOLLOW_RAMP: Duration = Duration::from_secs(5);

/// The provider: 70–110 ms normally, refusing for two minutes from t = 60 s, then cold.
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::replay::cold_start::{provider, ColdStartSetup};
/// let p = provider(&ColdStartSetup::default());
/// assert_eq!(p.up_again_at(), Some(Duration::from_secs(180)));
/// ```
pub fn provider(setup: &ColdStartSetup) -> Dependency {
    Dependency::builder(
        "address-lookup",
        Latency::uniform(Duration::from_millis(70), Duration::from_millis(110)),
    )
    .phase(OUTAGE_AT, Phase::Refuse)
    .phase(
        OUTAGE_AT + DOWN_FOR,
        Phase::ColdStart {
            cold: Latency::uniform(Duration::from_millis(1500), Duration::from_secs(3)),
            warm_after: setup.warm_after,
        },
    )
    .seed(setup.seed)
    .build()
}

/// Runs one configuration against the scripted provider.
///
/// ```
/// use fusebox_sim::replay::cold_start::{new_breaker, run_one, ColdStartSetup};
/// let (report, recovery) = run_one(&ColdStartSetup::default(), &new_breaker()).unwrap();
/// assert!(recovery.unwrap().as_secs() < 300);
/// # let _ = report;
/// ```
pub fn run_one(
    setup: &ColdStartSetup,
    breaker: &BreakerBuilder,
) -> io::Result<(Report, Option<Duration>)> {
    let b = breaker.build_detached().map_err(io::Error::other)?;
    run_call(setup, |dep| Call::new(dep).breaker(&b))
}

/// Runs the replay with the call `make` builds for the provider: for example through an
/// annotated function ([`Call::function`]) instead of a builder-made breaker.
///
/// ```
/// use fusebox_sim::Call;
/// use fusebox_sim::replay::cold_start::{new_breaker, run_call, ColdStartSetup};
/// let b = new_breaker().build_detached().unwrap();
/// let (_, recovery) = run_call(&ColdStartSetup::default(), |dep| Call::new(dep).breaker(&b)).unwrap();
/// assert!(recovery.unwrap().as_secs() < 300);
/// ```
pub fn run_call(
    setup: &ColdStartSetup,
    make: impl FnOnce(&Dependency) -> Call,
) -> io::Result<(Report, Option<Duration>)> {
    let dep = provider(setup);
    let up = OUTAGE_AT + DOWN_FOR;
    let report = Server::new(50)
        .route(Route::new("checkout", setup.rate).call(make(&dep)))
        .window("normal", Duration::ZERO, OUTAGE_AT)
        .window("down", OUTAGE_AT, up)
        .window("back, cold", up, setup.horizon)
        .sample_every(Duration::from_secs(10))
        .stop_when_settled(up, Duration::from_secs(600))
        .run_for(setup.horizon)?;
    let recovery = report.breakers.first().and_then(|t| t.recovery_after(up));
    Ok((report, recovery))
}

/// Runs both configurations.
///
/// ```no_run
/// use fusebox_sim::replay::cold_start::{cold_start, ColdStartSetup};
/// let r = cold_start(&ColdStartSetup::default()).unwrap();
/// println!("old {:?}, new {:?}", r.old_recovery, r.new_recovery);
/// ```
pub fn cold_start(setup: &ColdStartSetup) -> io::Result<ColdStart> {
    let up = OUTAGE_AT + DOWN_FOR;
    let (old, old_recovery) = run_one(setup, &old_breaker())?;
    let (new, new_recovery) = run_one(setup, &new_breaker())?;
    let (follow, follow_recovery) = run_one(setup, &follow_breaker())?;
    let old_trials = match old_recovery {
        // Requests that reached the provider after it was up, before the close.
        Some(r) => old
            .breakers
            .first()
            .map_or(0, |t| trials_between(t, up, up + r)),
        None => old.window("back, cold").map_or(0, |w| w.counts.sent),
    };
    Ok(ColdStart {
        up_again: up,
        relapses: (relapses(&new, up), relapses(&follow, up)),
        fallback_after: (fallback_after(&new), fallback_after(&follow)),
        follow_full_traffic: follow_recovery.map(|r| r + FOLLOW_RAMP),
        old,
        new,
        follow,
        old_recovery,
        new_recovery,
        follow_recovery,
        old_trials,
    })
}

/// Times the breaker opened at or after `up`.
pub(crate) fn relapses(r: &Report, up: Duration) -> usize {
    r.breakers.first().map_or(0, |t| {
        t.transitions
            .iter()
            .filter(|(at, s)| *s == fusebox_runtime::State::Open && *at >= up)
            .count()
    })
}

/// Share of checkouts the fallback answered once the provider was back.
/// When the provider is up again (cold): the end of the two-minute outage.
pub(crate) fn up_again() -> Duration {
    OUTAGE_AT + DOWN_FOR
}

pub(crate) fn fallback_after(r: &Report) -> f64 {
    r.window("back, cold")
        .map_or(0.0, |w| w.counts.fallback_share())
}

/// Half-open episodes that started in `[from, to]`: one trial each under `half_open_calls(1)`.
fn trials_between(t: &crate::BreakerTimeline, from: Duration, to: Duration) -> u64 {
    t.transitions
        .iter()
        .filter(|(at, s)| *s == fusebox_runtime::State::HalfOpen && *at >= from && *at <= to)
        .count() as u64
}

/// fusebox's breaker with a latency rule too (`trip_p95 = "500ms"`): half-open judges its
/// trials by it, and `half_open_slow = "3s"` is the warm-up bound that lets a provider
/// answering in 1.5–3 s while it warms pass its trials.
///
/// ```
/// use std::time::Duration;
/// let c = fusebox_sim::replay::cold_start::latency_breaker().config().unwrap();
/// assert_eq!(c.half_open_slow(), Some(Duration::from_secs(3)));
/// ```
pub fn latency_breaker() -> BreakerBuilder {
    new_breaker()
        .trip_p95(Duration::from_millis(500))
        .half_open_slow(Duration::from_secs(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn following_the_provider_recovers_within_15_s_without_relapse_and_fewer_fallbacks() {
        let c = cold_start(&ColdStartSetup::default()).unwrap();
        let fifteen = Duration::from_secs(15);
        let follow = c.follow_recovery.unwrap();
        assert!(
            follow <= fifteen,
            "closed {follow:?} after the provider was back"
        );
        assert!(c.follow_full_traffic.unwrap() <= fifteen);
        assert!(
            c.new_recovery.unwrap() > Duration::from_secs(45),
            "{:?}",
            c.new_recovery
        );
        assert!(c.relapses.1 <= 1, "{} relapses", c.relapses.1);
        let (new, follow) = c.fallback_after;
        assert!(follow < new, "fallback share {follow} vs new {new}");
        // The probe, not the end of `open_for`, found the provider back: half-open began
        // within `probe_every` plus one cold answer (under 3 s) of its return.
        let t = c.follow.breakers.first().unwrap();
        let half_open = t
            .transitions
            .iter()
            .find(|(at, s)| *s == fusebox_runtime::State::HalfOpen && *at >= c.up_again)
            .unwrap();
        assert!(
            half_open.0 <= c.up_again + Duration::from_secs(4),
            "{half_open:?}"
        );
    }

    #[test]
    fn a_latency_rule_with_a_warm_up_bound_still_recovers_within_two_minutes() {
        let setup = ColdStartSetup::default();
        let (_, plain) = run_one(&setup, &new_breaker()).unwrap();
        let (_, latency) = run_one(&setup, &latency_breaker()).unwrap();
        let two_min = Duration::from_secs(120);
        assert!(plain.unwrap() <= two_min, "{plain:?}");
        assert!(latency.unwrap() <= two_min, "{latency:?}");
        // Judged at the 500 ms bound, the cold trials fail: the warm-up bound is what helps.
        let strict = latency_breaker().half_open_slow(Duration::from_millis(500));
        let (_, strict) = run_one(&setup, &strict).unwrap();
        assert!(strict.is_none_or(|r| r > latency.unwrap()), "{strict:?}");
    }
}
