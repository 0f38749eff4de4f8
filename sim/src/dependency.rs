//! A simulated dependency with a scripted timeline of phases.

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use tokio::time::{sleep, Instant};

use super::{Latency, Rng};
use fusebox_runtime::Rejection;

/// What a simulated dependency does during one part of its timeline.
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::{Latency, Phase};
/// // The cold-start write-up: back after the outage, 1.5–3 s until it has served enough requests.
/// let cold = Phase::ColdStart {
///     cold: Latency::uniform(Duration::from_millis(1500), Duration::from_secs(3)),
///     warm_after: 12,
/// };
/// assert!(cold.is_up());
/// assert!(!Phase::Hang.is_up());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Phase {
    /// Answers `Ok` at the dependency's healthy latency.
    Healthy,
    /// Down, refusing connections: every call fails fast.
    Refuse,
    /// Down, accepting connections and never answering: only the caller's timeout ends a call.
    Hang,
    /// Up and answering `Ok`, at this latency instead (slow, not down: no errors at all).
    Slow(Latency),
    /// Healthy latency, and this share (0..=1) of calls fails.
    Failing(f64),
    /// Restarted cold: latency starts at `cold` and falls linearly to the healthy latency
    /// as it receives requests, reaching it after `warm_after` requests. Time alone warms
    /// nothing: caches fill by traffic.
    ColdStart {
        /// Latency of the first requests after the restart.
        cold: Latency,
        /// Requests it must receive before it answers at its healthy latency.
        warm_after: u64,
    },
}

impl Phase {
    /// True when the dependency is up (it answers, however slowly).
    pub fn is_up(&self) -> bool {
        !matches!(self, Phase::Refuse | Phase::Hang)
    }
}

/// Why a simulated call failed.
///
/// ```
/// use fusebox_sim::SimError;
/// assert_eq!(SimError::Refused.to_string(), "connection refused");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SimError {
    /// The dependency is down and refused the call.
    Refused,
    /// The dependency answered with an error (a 503).
    Failed,
    /// The caller gave up waiting (a plain timeout, or a breaker's).
    TimedOut,
    /// A breaker or bulkhead refused the call; the dependency never saw it.
    Rejected,
}

/// What an annotated function without a fallback returns for a rejection (`E: From<Rejection>`).
impl From<Rejection> for SimError {
    fn from(r: Rejection) -> SimError {
        match r {
            Rejection::TimedOut { .. } => SimError::TimedOut,
            _ => SimError::Rejected,
        }
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SimError::Refused => "connection refused",
            SimError::Failed => "503 service unavailable",
            SimError::TimedOut => "timed out",
            SimError::Rejected => "refused by a breaker or bulkhead",
        })
    }
}

impl std::error::Error for SimError {}

/// What a dependency has seen so far.
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::{Dependency, Latency};
/// let d = Dependency::builder("d", Latency::fixed(Duration::from_millis(1))).build();
/// assert_eq!(d.stats().received, 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DependencyStats {
    /// Calls that reached it.
    pub received: u64,
    /// Calls it answered with `Ok` (including calls the caller had given up on meanwhile).
    pub answered: u64,
    /// Calls it refused or failed.
    pub errors: u64,
}

struct State {
    rng: Rng,
    origin: Option<Instant>,
    phase: usize,
    since_restart: u64,
    stats: DependencyStats,
}

struct Inner {
    name: String,
    healthy: Latency,
    refuse_after: Duration,
    script: Vec<(Duration, Phase)>,
    state: RefCell<State>,
}

/// A simulated dependency: a healthy latency and a script of phases over virtual time.
/// Cheap to clone; clones share the timeline and counters. Runs on one thread.
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::{Dependency, Latency, Phase, SimError};
/// let s = Duration::from_secs;
/// let provider = Dependency::builder("address-lookup", Latency::fixed(Duration::from_millis(90)))
///     .phase(s(60), Phase::Refuse)
///     .phase(s(180), Phase::Healthy)
///     .build();
/// # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true)
/// #     .build().unwrap().block_on(async {
/// provider.start();
/// assert_eq!(provider.call().await, Ok(()));
/// tokio::time::sleep(s(90)).await;
/// assert_eq!(provider.call().await, Err(SimError::Refused));
/// assert_eq!(provider.stats().received, 2);
/// # });
/// ```
#[derive(Clone)]
pub struct Dependency {
    inner: Rc<Inner>,
    /// Called as each call is received: how a server counts calls made by user functions.
    tap: Option<Rc<dyn Fn()>>,
}

/// Builds a [`Dependency`]: a healthy latency, then phases at given times.
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::{Dependency, Latency, Phase};
/// let s = Duration::from_secs;
/// let payments = Dependency::builder("payments", Latency::fixed(Duration::from_millis(80)))
///     .phase(s(60), Phase::Slow(Latency::fixed(s(8))))
///     .phase(s(660), Phase::Healthy)
///     .seed(7)
///     .build();
/// assert_eq!(payments.phase_at(s(61)), Phase::Slow(Latency::fixed(s(8))));
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct DependencyBuilder {
    name: String,
    healthy: Latency,
    refuse_after: Duration,
    seed: u64,
    script: Vec<(Duration, Phase)>,
}

impl DependencyBuilder {
    /// From `at` (since the start of the simulation) until the next phase, behave as `phase`.
    pub fn phase(mut self, at: Duration, phase: Phase) -> Self {
        self.script.push((at, phase));
        self
    }
    /// How long a refused call takes to fail (default 1 ms).
    pub fn refuse_after(mut self, d: Duration) -> Self {
        self.refuse_after = d;
        self
    }
    /// Seed of its random draws (default 0); the name is mixed in.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    /// The dependency.
    pub fn build(mut self) -> Dependency {
        // Stable: phases given for the same instant keep their order, the last one wins.
        self.script.sort_by_key(|(at, _)| *at);
        if self.script.first().is_none_or(|(at, _)| !at.is_zero()) {
            self.script.insert(0, (Duration::ZERO, Phase::Healthy));
        }
        let inner = Rc::new(Inner {
            state: RefCell::new(State {
                rng: Rng::derived(self.seed, &self.name),
                origin: None,
                phase: 0,
                since_restart: 0,
                stats: DependencyStats::default(),
            }),
            name: self.name,
            healthy: self.healthy,
            refuse_after: self.refuse_after,
            script: self.script,
        });
        Dependency { inner, tap: None }
    }
}

impl Dependency {
    /// Starts describing a dependency that answers at `healthy` latency unless scripted otherwise.
    pub fn builder(name: impl Into<String>, healthy: Latency) -> DependencyBuilder {
        DependencyBuilder {
            name: name.into(),
            healthy,
            refuse_after: Duration::from_millis(1),
            seed: 0,
            script: Vec::new(),
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Sets time zero of the script to now (a [`Server`](super::Server) does this when it
    /// starts). A dependency never started starts at its first call.
    pub fn start(&self) {
        let mut s = self.inner.state.borrow_mut();
        s.origin = Some(Instant::now());
        s.phase = 0;
        s.since_restart = 0;
    }

    /// The phase at `at` since time zero.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox_sim::{Dependency, Latency, Phase};
    /// let d = Dependency::builder("x", Latency::fixed(Duration::from_millis(5)))
    ///     .phase(Duration::from_secs(10), Phase::Hang)
    ///     .build();
    /// assert_eq!(d.phase_at(Duration::from_secs(9)), Phase::Healthy);
    /// assert_eq!(d.phase_at(Duration::from_secs(10)), Phase::Hang);
    /// ```
    pub fn phase_at(&self, at: Duration) -> Phase {
        let i = self.inner.script.partition_point(|(start, _)| *start <= at);
        self.inner.script[i.saturating_sub(1)].1
    }

    /// When it was last up again after being down: the start of the first phase that is up
    /// and follows the last down phase. `None` if it is never down, or never up again.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox_sim::{Dependency, Latency, Phase};
    /// let s = Duration::from_secs;
    /// let d = Dependency::builder("x", Latency::fixed(Duration::from_millis(5)))
    ///     .phase(s(10), Phase::Refuse)
    ///     .phase(s(130), Phase::Healthy)
    ///     .build();
    /// assert_eq!(d.up_again_at(), Some(s(130)));
    /// ```
    pub fn up_again_at(&self) -> Option<Duration> {
        let script = &self.inner.script;
        let last_down = script.iter().rposition(|(_, p)| !p.is_up())?;
        script.get(last_down + 1).map(|(at, _)| *at)
    }

    /// What it has seen so far.
    pub fn stats(&self) -> DependencyStats {
        self.inner.state.borrow().stats
    }

    /// The same dependency, calling `tap` as each call is received.
    pub(super) fn tapped(&self, tap: Rc<dyn Fn()>) -> Dependency {
        Dependency {
            inner: self.inner.clone(),
            tap: Some(tap),
        }
    }

    /// One call: waits as the current phase says, then answers.
    pub async fn call(&self) -> Result<(), SimError> {
        if let Some(tap) = &self.tap {
            tap();
        }
        let (wait, answer) = self.receive();
        match wait {
            Some(d) => sleep(d).await,
            // A hung call never answers: only the caller's timeout, or dropping it, ends it.
            None => std::future::pending::<()>().await,
        }
        let mut s = self.inner.state.borrow_mut();
        match answer {
            Ok(()) => s.stats.answered += 1,
            Err(_) => s.stats.errors += 1,
        }
        answer
    }

    /// Takes a request in: how long it will take (`None`: forever) and how it will end.
    fn receive(&self) -> (Option<Duration>, Result<(), SimError>) {
        let inner = &*self.inner;
        let mut s = inner.state.borrow_mut();
        let now = Instant::now();
        let origin = *s.origin.get_or_insert(now);
        let at = now.saturating_duration_since(origin);
        // Calls come in time order, so the current phase only moves forward.
        let mut i = s.phase;
        while inner
            .script
            .get(i + 1)
            .is_some_and(|(start, _)| *start <= at)
        {
            i += 1;
        }
        if i != s.phase {
            s.phase = i;
            s.since_restart = 0;
        }
        s.stats.received += 1;
        let served_before = s.since_restart;
        s.since_restart += 1;
        let healthy = inner.healthy.draw(&mut s.rng);
        match inner.script[i].1 {
            Phase::Healthy => (Some(healthy), Ok(())),
            Phase::Refuse => (Some(inner.refuse_after), Err(SimError::Refused)),
            Phase::Hang => (None, Err(SimError::Failed)),
            Phase::Slow(l) => (Some(l.draw(&mut s.rng)), Ok(())),
            Phase::Failing(p) => {
                let failed = s.rng.chance(p);
                (
                    Some(healthy),
                    if failed {
                        Err(SimError::Failed)
                    } else {
                        Ok(())
                    },
                )
            }
            Phase::ColdStart { cold, warm_after } => {
                let cold = cold.draw(&mut s.rng);
                (
                    Some(warming(cold, healthy, served_before, warm_after)),
                    Ok(()),
                )
            }
        }
    }
}

/// Latency of a cold dependency that has received `served` requests since its restart.
fn warming(cold: Duration, healthy: Duration, served: u64, warm_after: u64) -> Duration {
    if served >= warm_after || cold <= healthy {
        return healthy;
    }
    let coldness = 1.0 - served as f64 / warm_after as f64;
    healthy + (cold - healthy).mul_f64(coldness)
}

impl fmt::Debug for Dependency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dependency")
            .field("name", &self.inner.name)
            .field("healthy", &self.inner.healthy)
            .field("script", &self.inner.script)
            .field("stats", &self.stats())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn paused<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap()
            .block_on(f)
    }

    async fn timed(d: &Dependency) -> (Duration, Result<(), SimError>) {
        let t = Instant::now();
        let r = d.call().await;
        (t.elapsed(), r)
    }

    #[test]
    fn cold_start_warms_only_by_requests() {
        let d = Dependency::builder("cold", Latency::fixed(ms(90)))
            .phase(ms(0), Phase::Refuse)
            .phase(
                Duration::from_secs(120),
                Phase::ColdStart {
                    cold: Latency::fixed(ms(2090)),
                    warm_after: 10,
                },
            )
            .build();
        paused(async {
            d.start();
            assert_eq!(timed(&d).await.1, Err(SimError::Refused));
            // Back up, then left alone for an hour: time alone does not warm it.
            tokio::time::sleep(Duration::from_secs(3600)).await;
            assert_eq!(timed(&d).await, (ms(2090), Ok(())));
            // Each request received warms it by a tenth of the gap.
            assert_eq!(timed(&d).await.0, ms(1890));
            for _ in 0..7 {
                d.call().await.unwrap();
            }
            assert_eq!(timed(&d).await.0, ms(290));
            assert_eq!(timed(&d).await.0, ms(90));
            assert_eq!(timed(&d).await.0, ms(90));
        });
    }

    #[test]
    fn slow_phase_answers_without_errors_and_hang_never_answers() {
        let d = Dependency::builder("pay", Latency::fixed(ms(80)))
            .phase(
                Duration::from_secs(1),
                Phase::Slow(Latency::fixed(ms(8000))),
            )
            .phase(Duration::from_secs(100), Phase::Hang)
            .build();
        paused(async {
            d.start();
            assert_eq!(timed(&d).await, (ms(80), Ok(())));
            tokio::time::sleep(Duration::from_secs(1)).await;
            assert_eq!(timed(&d).await, (ms(8000), Ok(())));
            tokio::time::sleep(Duration::from_secs(100)).await;
            let hung = tokio::time::timeout(Duration::from_secs(3600), d.call()).await;
            assert!(hung.is_err(), "a hung dependency must never answer");
            assert_eq!(d.stats().errors, 0);
            assert_eq!(d.stats().received, 3);
        });
    }

    #[test]
    fn failing_phase_fails_its_share() {
        let d = Dependency::builder("flaky", Latency::fixed(ms(10)))
            .phase(ms(0), Phase::Failing(0.3))
            .seed(9)
            .build();
        paused(async {
            d.start();
            let mut failed = 0;
            for _ in 0..2000 {
                if d.call().await.is_err() {
                    failed += 1;
                }
            }
            assert!((540..660).contains(&failed), "{failed} of 2000 failed");
        });
    }

    #[test]
    fn up_again_is_after_the_last_outage() {
        let s = Duration::from_secs;
        let d = Dependency::builder("x", Latency::fixed(ms(1)))
            .phase(s(10), Phase::Hang)
            .phase(s(20), Phase::Healthy)
            .phase(s(30), Phase::Refuse)
            .phase(s(40), Phase::Slow(Latency::fixed(ms(9))))
            .build();
        assert_eq!(d.up_again_at(), Some(s(40)));
        let never = Dependency::builder("y", Latency::fixed(ms(1))).build();
        assert_eq!(never.up_again_at(), None);
    }
}
