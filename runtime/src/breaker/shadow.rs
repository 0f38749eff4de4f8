//! Shadow settings (issue 29): a candidate configuration judged on the live breaker's calls
//! beside it, refusing nothing.
//!
//! The shadow is a real [`Core`] of the candidate settings, so it judges by exactly the
//! rules the live breaker would under them. It sees every call of the live breaker once that
//! call has an outcome (`call.rs`): it is asked whether it would have admitted the call; a
//! refusal is counted as "would have refused" and records nothing; an admission (normal,
//! trial or probe) records the live call's outcome and latency in it, cut off by the
//! candidate's timeout had the call run that long. A call the live breaker refused has no
//! outcome: the shadow still decides whether it would have refused it, and releases any
//! admission it gave as a cancelled call's. Its transitions are noted (`Sightings`) and
//! logged as the shadow's, at INFO, never as the live breaker's and never broadcast.
//!
//! Not seen by the shadow: calls cancelled or panicking (they end in the live permit's
//! `Drop`), and calls a full bulkhead refused (they never reached the dependency).
//!
//! Cost: the `Core` field is a `OnceBox` (one pointer), empty until a shadow is first set,
//! so the closed path of a breaker that never had one reads one word more (`watching`);
//! after a shadow was dropped, two.

// std's atomics even under loom: no model sets a shadow.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use fusebox_settings::{Settings, Source};
use once_cell::race::OnceBox;
use tokio::time::Instant;

use super::core::{pct, Core};
use super::events::{Events, Transition};
use super::permit::{Outcome, Permit};
use super::Breaker;
use crate::error::ConfigError;
use crate::settings::{BreakerBuilder, BreakerConfig};
use crate::state::State;
use crate::sync::{lock_std, read, write};

/// The `Core` field: empty until a shadow is first set. One pointer (8 bytes), read with one
/// load; a race to set the first shadow allocates twice and drops the loser's box.
#[derive(Default)]
pub(crate) struct ShadowSlot(OnceBox<Slot>);

pub(crate) struct Slot {
    /// Whether `current` holds a shadow: the hot path reads this, never the lock.
    on: AtomicBool,
    current: RwLock<Option<Arc<Shadow>>>,
}

/// A candidate's core and what was seen of it.
pub(crate) struct Shadow {
    core: Core,
    sightings: Arc<Sightings>,
    /// When it was set, on the shadow core's clock.
    set_at: u64,
    seen: AtomicU64,
}

/// A shadow's transitions, as the events of its core deliver them.
pub(crate) struct Sightings {
    times: std::sync::Mutex<Times>,
}

#[derive(Default, Clone, Copy)]
struct Times {
    opened_at: Option<Instant>,
    closed_at: Option<Instant>,
}

impl ShadowSlot {
    /// The slot when a shadow is set: one load (two once a shadow was ever set).
    #[inline]
    pub(crate) fn watching(&self) -> Option<&Slot> {
        self.0.get().filter(|s| s.on.load(Relaxed))
    }

    /// Sets (or replaces) the shadow; its judging starts from now, with an empty window.
    pub(crate) fn set(&self, config: BreakerConfig) {
        let slot = self.0.get_or_init(|| {
            Box::new(Slot {
                on: AtomicBool::new(false),
                current: RwLock::new(None),
            })
        });
        let mut current = write(&slot.current);
        *current = Some(Arc::new(Shadow::new(config)));
        slot.on.store(true, Relaxed);
    }

    /// The shadow, if one is set.
    pub(crate) fn get(&self) -> Option<Arc<Shadow>> {
        read(&self.0.get()?.current).clone()
    }

    /// Takes the shadow away.
    pub(crate) fn take(&self) -> Option<Arc<Shadow>> {
        let slot = self.0.get()?;
        let mut current = write(&slot.current);
        slot.on.store(false, Relaxed);
        current.take()
    }
}

impl Slot {
    /// A live call ended with `outcome`, started waiting at `start` (`None`: answered in its
    /// first poll).
    #[cold]
    pub(crate) fn judge(&self, start: Option<Instant>, outcome: Outcome) {
        if let Some(s) = read(&self.current).as_ref() {
            s.judge(start, outcome);
        }
    }

    /// The live breaker refused a call: would the shadow have?
    #[cold]
    pub(crate) fn refused(&self) {
        if let Some(s) = read(&self.current).as_ref() {
            s.seen.fetch_add(1, Relaxed);
            if let Ok(a) = s.core.admit() {
                // Admitted, but nothing to judge it by: let go as a call that never ended.
                Permit::replay(&s.core, a, None, Outcome::Cancelled);
            }
        }
    }
}

impl Shadow {
    fn new(config: BreakerConfig) -> Shadow {
        let sightings = Arc::new(Sightings {
            times: std::sync::Mutex::new(Times::default()),
        });
        let core = Core::new(config, Events::shadow(sightings.clone()));
        Shadow {
            set_at: core.clock().now(),
            core,
            sightings,
            seen: AtomicU64::new(0),
        }
    }

    fn judge(&self, start: Option<Instant>, outcome: Outcome) {
        self.seen.fetch_add(1, Relaxed);
        // A refusal is counted by the shadow core's own rejection counters.
        if let Ok(a) = self.core.admit() {
            Permit::replay(&self.core, a, start, outcome);
        }
    }

    /// What the shadow would have done so far. Only reads: taken on another runtime's clock
    /// (a parallel test's metrics snapshot, ahead of this breaker's), expiring the window's
    /// slots would drop the calls the breaker's own clock still counts.
    pub(crate) fn report(&self) -> ShadowReport {
        let core = &self.core;
        let now = core.clock().now();
        let c = &core.counters;
        let times = *lock_std(&self.sightings.times);
        let totals = core.window.totals_view(now);
        ShadowReport {
            settings: core.config().clone(),
            state: core.state(),
            set_at: core.clock().instant(self.set_at),
            would_have_opened_at: times.opened_at,
            would_have_closed_at: times.closed_at,
            openings: c.times_opened.load(Relaxed),
            would_have_refused: {
                let r = c.refused();
                r.open + r.half_open + r.ramp
            },
            calls_seen: self.seen.load(Relaxed),
            window_calls: totals.calls,
            failure_rate: pct(totals.failures, totals.calls),
            slow_rate: pct(totals.slow, totals.calls),
        }
    }

    /// The candidate settings.
    pub(crate) fn config(&self) -> &BreakerConfig {
        self.core.code_config()
    }
}

impl Sightings {
    /// A transition of the shadow's core: noted, and logged as the shadow's own.
    pub(crate) fn note(&self, t: &Transition) {
        let mut times = lock_std(&self.times);
        let name = &t.name;
        match t.to {
            // An episode starts when it would have left closed; reopenings after failed
            // trials belong to it (counted in `openings`).
            State::Open if t.from == State::Closed => {
                times.opened_at = Some(t.at);
                times.closed_at = None;
                tracing::info!(breaker = %name, reason = %t.reason, "shadow of `{name}` would have opened");
            }
            State::Open => {
                tracing::info!(breaker = %name, reason = %t.reason, "shadow of `{name}` would have reopened");
            }
            State::HalfOpen => {
                tracing::info!(breaker = %name, reason = %t.reason, "shadow of `{name}` would have gone half-open");
            }
            State::Closed => {
                times.closed_at = Some(t.at);
                tracing::info!(breaker = %name, reason = %t.reason, "shadow of `{name}` would have closed");
            }
            // Nobody forces a shadow.
            State::ForcedOpen | State::ForcedClosed => {}
        }
    }
}

/// What a shadow configuration would have done on the live breaker's calls since it was set
/// ([`Breaker::set_shadow`](crate::Breaker::set_shadow)). Times are on `tokio::time`'s clock,
/// like [`Breaker::state_since`](crate::Breaker::state_since): virtual under a paused clock.
///
/// ```
/// use fusebox::{Breaker, State};
/// let live = Breaker::builder("shadow-report-doc").build_detached().unwrap();
/// live.set_shadow([("failure_rate", "20")]).unwrap();
/// let r = live.shadow().unwrap();
/// assert_eq!((r.state, r.calls_seen, r.would_have_refused), (State::Closed, 0, 0));
/// assert_eq!(r.settings.failure_rate(), 20);
/// assert!(r.would_have_opened_at.is_none());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ShadowReport {
    /// The candidate settings, under the live breaker's name.
    pub settings: BreakerConfig,
    /// The state the shadow is in now.
    pub state: State,
    /// When the shadow was set.
    pub set_at: Instant,
    /// When it would have opened from closed, last (`None`: it never would have). A
    /// reopening after failed trials is part of the same episode: it moves only `openings`.
    pub would_have_opened_at: Option<Instant>,
    /// When it would have closed again after that opening (`None` while it would still be
    /// open or half-open, or never opened).
    pub would_have_closed_at: Option<Instant>,
    /// Times it would have opened.
    pub openings: u64,
    /// Calls it would have refused (open, half-open and not a trial, outside a ramp's share).
    pub would_have_refused: u64,
    /// Calls of the live breaker it saw.
    pub calls_seen: u64,
    /// Calls in its window now.
    pub window_calls: u64,
    /// Failed share of its window, in percent.
    pub failure_rate: f64,
    /// Slow share of its window, in percent.
    pub slow_rate: f64,
}

impl ShadowReport {
    /// Time from setting the shadow to its last would-be opening from closed.
    ///
    /// ```
    /// use fusebox::Breaker;
    /// let live = Breaker::builder("shadow-after-doc").build_detached().unwrap();
    /// live.set_shadow([("failure_rate", "20")]).unwrap();
    /// assert_eq!(live.shadow().unwrap().opened_after(), None);
    /// ```
    pub fn opened_after(&self) -> Option<Duration> {
        self.would_have_opened_at
            .map(|t| t.saturating_duration_since(self.set_at))
    }
}

/// What [`Breaker::set_shadow`] takes as candidate settings: a [`BreakerConfig`] or a
/// [`BreakerBuilder`] (their settings, under the live breaker's name), or `(key, value)`
/// pairs as in [`BreakerBuilder::from_settings`], checked by the same settings table and
/// layered on the settings in force: every key the pairs leave out keeps the live breaker's
/// value (a config or a builder is taken whole).
///
/// ```
/// use fusebox::Breaker;
/// let live = Breaker::builder("candidate-doc").build_detached().unwrap();
/// let candidate = Breaker::builder("any-name").failure_rate(20).config().unwrap();
/// live.set_shadow(candidate).unwrap();
/// live.set_shadow(Breaker::builder("any-name").failure_rate(30)).unwrap();
/// live.set_shadow([("failure_rate", "40")]).unwrap();
/// assert_eq!(live.shadow().unwrap().settings.name(), "candidate-doc");
/// ```
pub trait ShadowSettings {
    /// The candidate's settings, checked; `live` is the settings in force, which pairs are
    /// layered on.
    fn candidate(self, live: &Settings) -> Result<Settings, ConfigError>;
}

impl ShadowSettings for BreakerConfig {
    fn candidate(self, _: &Settings) -> Result<Settings, ConfigError> {
        Ok(Arc::unwrap_or_clone(self.settings))
    }
}

impl ShadowSettings for &BreakerConfig {
    fn candidate(self, _: &Settings) -> Result<Settings, ConfigError> {
        Ok(Settings::clone(&self.settings))
    }
}

impl ShadowSettings for BreakerBuilder {
    fn candidate(self, _: &Settings) -> Result<Settings, ConfigError> {
        Ok(Arc::unwrap_or_clone(self.config()?.settings))
    }
}

impl ShadowSettings for &BreakerBuilder {
    fn candidate(self, _: &Settings) -> Result<Settings, ConfigError> {
        Ok(Arc::unwrap_or_clone(self.config()?.settings))
    }
}

impl<I, K, V> ShadowSettings for I
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: AsRef<str>,
{
    fn candidate(self, live: &Settings) -> Result<Settings, ConfigError> {
        live.with_overrides(self)
    }
}

impl Breaker {
    /// Judges `candidate` settings on this breaker's calls beside the live ones, refusing
    /// nothing: [`shadow`](Breaker::shadow) then tells when the candidate would have opened
    /// and closed, and how many calls it would have refused. Replaces any shadow set before
    /// (its figures start again from zero). A bad candidate is a [`ConfigError`] and leaves
    /// the shadow as it was. The shadow's transitions are logged at INFO as the shadow's
    /// (`shadow of `payments` would have opened`), never broadcast as the breaker's.
    ///
    /// What the shadow sees: every call that ends with an outcome (its latency too, so a
    /// slow rule or a shorter timeout of the candidate judges it), and every call the live
    /// breaker refused (the shadow may refuse it too). Calls cancelled, panicking or refused
    /// by a full bulkhead are not judged.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::{Breaker, Error, State};
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let live = Breaker::builder("set-shadow-doc").window_calls(10).build_detached().unwrap();
    /// live.set_shadow([("window_calls", "10"), ("min_calls", "5"), ("failure_rate", "20")]).unwrap();
    /// for i in 0..10 {
    ///     // One call in five fails: the live breaker (50 %) stays closed.
    ///     let _: Result<(), Error<&str>> = live.call(async move {
    ///         tokio::time::sleep(Duration::from_millis(10)).await;
    ///         if i % 5 == 4 { Err("boom") } else { Ok(()) }
    ///     }).await;
    /// }
    /// assert_eq!(live.state(), State::Closed);
    /// let r = live.shadow().unwrap();
    /// assert_eq!((r.state, r.openings), (State::Open, 1));
    /// assert!(r.would_have_refused > 0, "the shadow would have refused the calls after it opened");
    /// # }
    /// ```
    pub fn set_shadow(&self, candidate: impl ShadowSettings) -> Result<(), ConfigError> {
        let live = self.0.config();
        let settings = candidate.candidate(&live.settings)?;
        self.0.shadow.set(BreakerConfig {
            name: live.name.clone(),
            base_len: live.base_len,
            settings: Arc::new(settings),
        });
        tracing::info!(breaker = %live.name, "shadow settings set: judged beside the live ones, refusing nothing");
        Ok(())
    }

    /// What the shadow set by [`set_shadow`](Breaker::set_shadow) would have done so far;
    /// `None` without one.
    ///
    /// ```
    /// use fusebox::Breaker;
    /// let live = Breaker::builder("shadow-doc").build_detached().unwrap();
    /// assert!(live.shadow().is_none());
    /// ```
    pub fn shadow(&self) -> Option<ShadowReport> {
        Some(self.0.shadow.get()?.report())
    }

    /// Ends the shadow and makes its candidate settings the live ones (a live change from
    /// the admin source, with no expiry: [`change_settings`](Breaker::change_settings));
    /// returns them, `None` without a shadow (or, logged at ERROR, when they could not be put
    /// in force: the shadow is then kept). The code's settings return with
    /// [`clear_settings_change`](Breaker::clear_settings_change).
    ///
    /// ```
    /// use fusebox::Breaker;
    /// let live = Breaker::builder("promote-doc").build_detached().unwrap();
    /// live.set_shadow([("failure_rate", "20")]).unwrap();
    /// let candidate = live.promote_shadow().unwrap();
    /// assert_eq!(candidate.failure_rate(), 20);
    /// assert_eq!(live.config_in_force().failure_rate(), 20);
    /// assert!(live.shadow().is_none());
    /// ```
    pub fn promote_shadow(&self) -> Option<BreakerConfig> {
        let candidate = self.0.shadow.get()?.config().clone();
        let given = candidate
            .settings()
            .to_text()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        // The candidate's settings whole, not as text layered on those in force: a setting
        // it turns off has no text. The shadow ends only once its settings are in force.
        match self.change_settings_to(given, Some(candidate.settings()), Source::Admin, None) {
            Ok(()) => {
                self.0.shadow.take();
                tracing::info!(breaker = %self.0.code_config().name, "shadow settings promoted: now the live ones");
                Some(candidate)
            }
            Err(e) => {
                tracing::error!(breaker = %self.0.code_config().name, error = %e, "shadow settings could not be promoted: the shadow is kept");
                None
            }
        }
    }

    /// Ends the shadow, returning its last report; `None` without one. The live breaker is
    /// left as it is.
    ///
    /// ```
    /// use fusebox::Breaker;
    /// let live = Breaker::builder("drop-shadow-doc").build_detached().unwrap();
    /// live.set_shadow([("failure_rate", "20")]).unwrap();
    /// assert_eq!(live.drop_shadow().unwrap().calls_seen, 0);
    /// assert!(live.shadow().is_none() && live.drop_shadow().is_none());
    /// ```
    pub fn drop_shadow(&self) -> Option<ShadowReport> {
        let shadow = self.0.shadow.take()?;
        tracing::info!(breaker = %self.0.config().name, "shadow settings dropped");
        Some(shadow.report())
    }
}
