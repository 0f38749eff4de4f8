//! The breaker builder: a name and `fusebox_settings::RawSettings`, each setter delegating,
//! then one [`config`](BreakerBuilder::config) that runs the check the attribute and text
//! parsing also run. Its `build` methods live where breakers are made: `build_detached` with
//! the breaker, `build` with the registry.

use std::time::Duration;

use fusebox_settings::{check_name, ConfigError, RawSettings};

use super::config::BreakerConfig;

/// Builds a [`BreakerConfig`] (and from it a registered [`Breaker`](crate::breaker::Breaker)).
///
/// Every setter takes plain values; [`config`](Self::config) checks them all and returns a
/// typed [`ConfigError`] for the first bad one: the verdict and message `#[breaker]` gives at
/// compile time for the same values.
///
/// ```
/// use std::time::Duration;
/// use fusebox::Breaker;
/// let breaker = Breaker::builder("address-lookup")
///     .timeout(Duration::from_millis(800))
///     .half_open_timeout(Duration::from_secs(3))
///     .half_open_pct(5)
///     .open_for(Duration::from_secs(30))
///     .build()
///     .unwrap();
/// assert_eq!(breaker.name(), "address-lookup");
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct BreakerBuilder {
    name: String,
    pub(super) raw: RawSettings,
}

/// Setters that hand their arguments to the `RawSettings` setter of the same name.
macro_rules! delegate {
    ($($(#[$doc:meta])* $setter:ident($($arg:ident: $ty:ty),*);)*) => {$(
        $(#[$doc])*
        pub fn $setter(mut self, $($arg: $ty),*) -> Self {
            self.raw = self.raw.$setter($($arg),*);
            self
        }
    )*};
}

impl BreakerBuilder {
    pub(crate) fn new(name: impl Into<String>) -> Self {
        BreakerBuilder {
            name: name.into(),
            raw: RawSettings::new(),
        }
    }

    delegate! {
        /// Percent of failed calls in the window that opens the breaker (1..=100, default 50).
        /// Given, it also keeps the breaker from deriving a slow rule from `timeout`.
        failure_rate(pct: u8);
        /// Time-based sliding window (default 30 s; with a `timeout` and no window given, the
        /// last 100 calls instead: see `fusebox_settings::defaults::DERIVED_WINDOW_CALLS`).
        window(d: Duration);
        /// Count-based window: the last `n` calls (1..=1 000 000).
        window_calls(n: u32);
        /// Calls in the window before any rate is judged (default 20, or the window size if smaller).
        min_calls(n: u32);
        /// A call at least `bound` long is slow; `rate` percent slow calls open the breaker.
        /// Default: none, except that a breaker given a `timeout` and none of `window`,
        /// `window_calls`, `min_calls`, `failure_rate` or a slow rule judges a call slow at half
        /// its timeout, 50 % opening it (`defaults::DERIVED_SLOW_DIVISOR`, seed 002); once a
        /// hundred answers have taught it the dependency's usual latency, also from five times
        /// that, if shorter (never under 100 ms): seed 002's 8 s answers, 80 ms usually, under a
        /// 30 s timeout. The config shows the rule's own bound; what a call starting now is
        /// judged by is [`BreakerMetrics::slow_bound`](crate::BreakerMetrics::slow_bound).
        ///
        /// ```
        /// use std::time::Duration;
        /// use fusebox::Breaker;
        /// let cfg = Breaker::builder("slow-doc").timeout(Duration::from_secs(2)).config().unwrap();
        /// let rule = cfg.slow().unwrap();
        /// assert_eq!((rule.bound, rule.rate), (Duration::from_secs(1), 50));
        /// ```
        slow(bound: Duration, rate: u8);
        /// Open when the latency percentile `pct` (1..=99: 50, 90, 95, 99...) exceeds `bound`:
        /// more than `100 - pct` percent of calls are slower than `bound`.
        trip_percentile(pct: u8, bound: Duration);
        /// `trip_percentile(50, bound)`.
        trip_p50(bound: Duration);
        /// `trip_percentile(90, bound)`.
        trip_p90(bound: Duration);
        /// `trip_percentile(95, bound)`.
        trip_p95(bound: Duration);
        /// `trip_percentile(99, bound)`.
        trip_p99(bound: Duration);
        /// Per-call timeout; a timed-out call is a failure and is slow. It runs from the end of
        /// the call's first poll; like `tokio::time::timeout`, a call that answers when first
        /// polled is never timed out.
        ///
        /// The one setting a breaker needs: from it, the settings left unset are derived
        /// (`fusebox_settings::defaults::DERIVED_*`, each justified from the replays there):
        /// the last 100 calls as the window; a slow rule at half the timeout, or five times the
        /// dependency's usual latency once learned, whichever is shorter (unless a window,
        /// threshold or slow rule was given); and, when no recovery setting was given
        /// (`open_for`, `backoff`, `half_open_window`, `half_open_calls`, `probe_every`,
        /// `ramp`; not `half_open_pct`, taken as the half-open share, nor
        /// `half_open_timeout` nor `half_open_slow`), trials under 4 × the timeout, a probe
        /// every second while open that backs off while the dependency hangs, a 2 s half-open
        /// window, a 5 s ramp, and open periods doubling up to an hour. Every setting given
        /// keeps its exact meaning. Without a `timeout`, a slow rule given stands for half of
        /// one (`trip_p95 = "500ms"`: the same as from a 1 s timeout), calls themselves not
        /// timed out.
        ///
        /// ```
        /// use std::time::Duration;
        /// use fusebox::Breaker;
        /// let s = Duration::from_secs;
        /// let cfg = Breaker::builder("timeout-doc").timeout(Duration::from_millis(800)).config().unwrap();
        /// assert_eq!(cfg.half_open_timeout(), Some(Duration::from_millis(3200)));
        /// assert_eq!((cfg.probe_every(), cfg.ramp()), (Some(s(1)), Some(s(5))));
        /// ```
        timeout(d: Duration);
        /// Timeout of trial calls and probes. Default: with no recovery setting given, 4 ×
        /// `timeout` (seed 000's cold provider answers its first calls in 1.5–3 s against an
        /// 800 ms timeout), or with a `half_open_slow` given twice that bound, never under
        /// `timeout`; otherwise `timeout`. With no timeout at all, trials and probes are cut
        /// at `half_open_window` (with a share) or at `open_for` (with `half_open_calls`), and
        /// their callers get `Rejection::TimedOut`: a trial that hangs never holds the breaker
        /// half-open. Give one (or `timeout`) to let trials run longer.
        half_open_timeout(d: Duration);
        /// The latency at which a half-open trial counts as slow (default: the slow rule's
        /// bound; under the slow rule derived from `timeout`, or a given one (`trip_p95`) with
        /// `timeout` and no recovery setting, the trial timeout: a trial that
        /// answers passes, so a dependency that warms by serving requests recovers, except
        /// after the breaker opened on slowness alone and a call of it answered, when trials
        /// are judged by the rule's own bound: that dependency was answering, only slowly, and
        /// would pass them while slow; one whose calls timed out was down, hung).
        /// Half-open judges trials by the whole rule, slow calls included; a dependency that warms
        /// up by serving requests answers slowly at first, so a looser bound here lets it recover
        /// while a still-slow one keeps the breaker open. Needs a slow rule (`slow`, `trip_pNN`).
        ///
        /// ```
        /// use std::time::Duration;
        /// use fusebox::Breaker;
        /// use fusebox::settings::ConfigError;
        /// let ms = Duration::from_millis;
        /// let ok = Breaker::builder("warmup-doc").trip_p95(ms(500)).half_open_slow(ms(3000)).config();
        /// assert!(ok.is_ok());
        /// let alone = Breaker::builder("warmup-doc").half_open_slow(ms(3000)).config();
        /// assert!(matches!(alone, Err(ConfigError::OutOfRange { field: "half_open_slow", .. })));
        /// ```
        half_open_slow(d: Duration);
        /// Time open before half-open (default 30 s).
        open_for(d: Duration);
        /// Grow repeated open periods by `factor`, never beyond `max` (default: no growth; with
        /// a `timeout` and no recovery setting, doubling up to an hour, the probes finding a
        /// recovery first: `defaults::DERIVED_OPEN_FOR_MAX`).
        backoff(factor: f64, max: Duration);
        /// Share of traffic admitted in half-open, in percent (default 5).
        half_open_pct(pct: u8);
        /// How long half-open samples before judging (default 30 s; 2 s with a `timeout` and no
        /// recovery setting, where a passed probe starts it).
        half_open_window(d: Duration);
        /// Instead of a share: `n` trial calls, all of which must succeed. Trials that do not
        /// come are not waited for forever: with fewer than `n` passed trials 30 s after
        /// half-open began (`defaults::HALF_OPEN_WINDOW`, or the trial timeout if longer),
        /// the breaker reopens. An ignored call is not a trial: its slot is given back.
        half_open_calls(n: u32);
        /// A breaker away from closed longer than this is `stuck` and logs at ERROR (default 5 min).
        alert_after(d: Duration);
        /// For a keyed breaker (`key = ...`): at most `n` keys get a breaker of their own
        /// (1..=1000000, default 1000). At the cap, idle keys make room (closed with an empty
        /// window, or no call for 30 s and neither forced nor in an open period); past that,
        /// new keys share the breaker `name/_overflow` (counted, logged at ERROR). No call is
        /// ever refused because of the cap.
        ///
        /// ```
        /// use fusebox::Breaker;
        /// let cfg = Breaker::builder("per-host").max_keys(100).config().unwrap();
        /// assert_eq!(cfg.max_keys(), 100);
        /// assert!(Breaker::builder("per-host").max_keys(0).config().is_err());
        /// ```
        max_keys(n: u32);
        /// While open, let one real call through as a probe every `d` (off by default, except
        /// with a `timeout` and no recovery setting: every second, a probe that was slow or
        /// timed out pushing the next one to an eighth of the time away from closed, so a
        /// dependency that hangs costs little: `defaults::PROBE_BACKOFF_SHARE`). Its
        /// caller gets the dependency's answer (or the fallback); a probe that passes (no
        /// failure, not slow by the trial bound) starts half-open at once and counts as its
        /// first passed trial, so the breaker learns of a recovery within `d` instead of at
        /// the end of `open_for`. A failed probe changes nothing: the open period is never
        /// extended by it, and `open_for` stays the upper bound. A probe runs under the trial
        /// timeout (`half_open_timeout`, else `timeout`, else the half-open window or
        /// `open_for`): against a dependency that hangs, give one, or probes pile up in flight
        /// (one per `d`). A probe its caller cancels early uses its interval all the same, so
        /// callers that give up cannot raise the probe rate; one that never reached the
        /// dependency (a full bulkhead refused it, or it ended ignored) tells nothing, and the
        /// next caller probes in its place.
        /// Must be shorter than the longest open period. Use it when a dependency
        /// usually comes back well before `open_for` ends and one call per `d` is harmless.
        ///
        /// ```
        /// use std::time::Duration;
        /// use fusebox::Breaker;
        /// use fusebox::settings::ConfigError;
        /// let s = Duration::from_secs;
        /// let cfg = Breaker::builder("probe-doc").probe_every(s(1)).config().unwrap();
        /// assert_eq!(cfg.probe_every(), Some(s(1)));
        /// let never = Breaker::builder("probe-doc").open_for(s(5)).probe_every(s(5)).config();
        /// assert!(matches!(never, Err(ConfigError::OutOfRange { field: "probe_every", .. })));
        /// ```
        probe_every(d: Duration);
        /// After half-open passes, let traffic back in gradually (off by default: all at once;
        /// over 5 s with a `timeout` and no recovery setting).
        /// The admitted share grows linearly from the half-open share (`half_open_pct`, or 5 %
        /// under `half_open_calls`) to 100 % over `d`, spread evenly over the calls; the rest
        /// are refused (`Rejection::Open` with `state: Closed`, so the fallback answers). The
        /// breaker is `Closed` throughout, with a [`ramp_share`](crate::BreakerMetrics::ramp_share)
        /// in its metrics, and judges every admitted call by its whole rule: a breach during
        /// the ramp reopens at once, and the open period then grows with `backoff` as for a
        /// failed half-open. Use it for a dependency that warms by serving requests (caches,
        /// JITs, connection pools), which full load at once would knock over again.
        ///
        /// Derived (a `timeout` and no recovery setting), after an opening on failures, the
        /// ramp's calls run as the trials did, under `half_open_timeout` and slow only at the
        /// trial bound: a provider back cold answers them slowly and warms only by serving them
        /// (seed 000; cut at `timeout`, each ramp relapsed within seconds). The window starts
        /// anew as that ramp ends, and an opening before the calls after it filled the window
        /// is the same episode (a count window's calls, a time window's length): trials that
        /// pass by answering, the open period's growth kept. On slowness, only when nearly
        /// every call since the ramp was slow: a dependency that answered well after the ramp
        /// and then turned slow is a new slowness, judged by the slow bound.
        ///
        /// ```
        /// use std::time::Duration;
        /// use fusebox::Breaker;
        /// let cfg = Breaker::builder("ramp-doc").ramp(Duration::from_secs(20)).config().unwrap();
        /// assert_eq!(cfg.ramp(), Some(Duration::from_secs(20)));
        /// ```
        ramp(d: Duration);
    }

    /// Checks the name, then every setting, and returns the validated config.
    ///
    /// ```
    /// use fusebox::Breaker;
    /// use fusebox::settings::ConfigError;
    /// let err = Breaker::builder("big").window_calls(2_000_000).config().unwrap_err();
    /// assert!(matches!(err, ConfigError::OutOfRange { field: "window_calls", .. }));
    /// ```
    pub fn config(&self) -> Result<BreakerConfig, ConfigError> {
        check_name(&self.name)?;
        let settings = self.raw.check()?;
        Ok(BreakerConfig {
            base_len: self.name.len(),
            name: self.name.as_str().into(),
            settings: std::sync::Arc::new(settings),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::breaker::Breaker;

    #[test]
    fn every_bad_value_is_a_typed_error() {
        let b = || Breaker::builder("x");
        assert!(matches!(
            b().failure_rate(101).config(),
            Err(ConfigError::OutOfRange {
                field: "failure_rate",
                ..
            })
        ));
        assert!(matches!(
            b().window(Duration::ZERO).config(),
            Err(ConfigError::ZeroDuration { field: "window" })
        ));
        assert!(matches!(
            b().window(Duration::from_secs(1)).window_calls(3).config(),
            Err(ConfigError::Conflict { .. })
        ));
        assert!(matches!(
            b().half_open_calls(3).half_open_pct(5).config(),
            Err(ConfigError::Conflict { .. })
        ));
        assert!(matches!(
            b().window_calls(10).min_calls(11).config(),
            Err(ConfigError::OutOfRange {
                field: "min_calls",
                ..
            })
        ));
        assert!(matches!(
            b().backoff(0.5, Duration::from_secs(60)).config(),
            Err(ConfigError::OutOfRange {
                field: "backoff",
                ..
            })
        ));
        assert!(matches!(
            b().backoff(f64::NAN, Duration::from_secs(60)).config(),
            Err(ConfigError::OutOfRange {
                field: "backoff",
                ..
            })
        ));
        assert!(matches!(
            b().backoff(2.0, Duration::from_secs(1)).config(),
            Err(ConfigError::OutOfRange {
                field: "open_for_max",
                ..
            })
        ));
        assert!(matches!(
            b().half_open_pct(0).config(),
            Err(ConfigError::OutOfRange {
                field: "half_open_pct",
                ..
            })
        ));
        assert!(matches!(
            Breaker::builder("").config(),
            Err(ConfigError::BadName { .. })
        ));
        assert!(matches!(
            b().trip_percentile(100, Duration::from_millis(1)).config(),
            Err(ConfigError::OutOfRange {
                field: "trip_pNN",
                ..
            })
        ));
    }

    #[test]
    fn the_name_is_checked_before_the_settings() {
        let err = Breaker::builder("").failure_rate(0).config().unwrap_err();
        assert!(matches!(err, ConfigError::BadName { .. }), "{err}");
    }

    #[test]
    fn min_calls_defaults_to_a_small_window() {
        let c = Breaker::builder("x").window_calls(10).config().unwrap();
        assert_eq!(c.min_calls(), 10);
    }

    #[test]
    fn open_period_grows_only_when_asked_and_is_capped() {
        let fixed = Breaker::builder("x").config().unwrap();
        assert_eq!(fixed.open_period(5), Duration::from_secs(30));
        let grow = Breaker::builder("x")
            .open_for(Duration::from_secs(30))
            .backoff(2.0, Duration::from_secs(60))
            .config()
            .unwrap();
        assert_eq!(grow.open_period(0), Duration::from_secs(30));
        assert_eq!(grow.open_period(1), Duration::from_secs(60));
        assert_eq!(grow.open_period(40), Duration::from_secs(60));
    }

    #[test]
    fn keyed_config_keeps_base_and_key() {
        let c = Breaker::builder("redis").config().unwrap().with_key("3");
        assert_eq!(c.name(), "redis/3");
        assert_eq!(c.base_name(), "redis");
        assert_eq!(c.key(), Some("3"));
    }

    #[test]
    fn a_generated_config_equals_the_built_one() {
        let built = Breaker::builder("gen").window_calls(8).config().unwrap();
        let generated = BreakerConfig::from_settings("gen", built.settings().clone());
        assert_eq!(generated, built);
        assert!(generated.same_settings(&built.with_key("1")));
    }
}
