//! The breaker builder: plain setters, then one check of every setting that returns a typed
//! [`ConfigError`] for the first bad one. Its `build` methods live where breakers are made:
//! `build_detached` with the breaker, `build` with the registry.

use std::time::Duration;

use super::checks::{at_least_one, check_name, conflict, pct, positive};
use super::config::{BreakerConfig, HalfOpenPolicy, SlowRule, WindowKind};
use crate::error::ConfigError;

/// Builds a [`BreakerConfig`] (and from it a registered [`Breaker`](crate::breaker::Breaker)).
///
/// Every setter takes plain values; [`config`](Self::config) checks them all and returns a
/// typed [`ConfigError`] for the first bad one.
///
/// ```
/// use std::time::Duration;
/// use fusebox_runtime::Breaker;
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
    failure_rate: u8,
    window: Option<Duration>,
    window_calls: Option<u32>,
    min_calls: Option<u32>,
    slow: Option<SlowRule>,
    slow_twice: bool,
    timeout: Option<Duration>,
    half_open_timeout: Option<Duration>,
    open_for: Duration,
    backoff: Option<(f64, Duration)>,
    half_open_pct: Option<u8>,
    half_open_window: Option<Duration>,
    half_open_calls: Option<u32>,
    alert_after: Duration,
    max_keys: u32,
}

/// The most keys one keyed breaker may hold (each is about 1 KiB plus its metrics series).
pub(crate) const MAX_KEYS: u32 = 1_000_000;

/// The largest count-based window (8 MB of entries).
pub(crate) const MAX_WINDOW_CALLS: u32 = 1_000_000;

/// The defaults every unset setting takes, in one place.
pub(crate) mod defaults {
    use std::time::Duration;
    pub const FAILURE_RATE: u8 = 50;
    pub const WINDOW: Duration = Duration::from_secs(30);
    pub const MIN_CALLS: u32 = 20;
    pub const OPEN_FOR: Duration = Duration::from_secs(30);
    pub const HALF_OPEN_PCT: u8 = 5;
    pub const HALF_OPEN_WINDOW: Duration = Duration::from_secs(30);
    pub const ALERT_AFTER: Duration = Duration::from_secs(300);
    pub const MAX_KEYS: u32 = 1000;
}

impl BreakerBuilder {
    pub(crate) fn new(name: impl Into<String>) -> Self {
        BreakerBuilder {
            name: name.into(),
            failure_rate: defaults::FAILURE_RATE,
            window: None,
            window_calls: None,
            min_calls: None,
            slow: None,
            slow_twice: false,
            timeout: None,
            half_open_timeout: None,
            open_for: defaults::OPEN_FOR,
            backoff: None,
            half_open_pct: None,
            half_open_window: None,
            half_open_calls: None,
            alert_after: defaults::ALERT_AFTER,
            max_keys: defaults::MAX_KEYS,
        }
    }

    /// For a keyed breaker (`key = ...`): at most `n` keys get a breaker of their own
    /// (1..=1000000, default 1000). At the cap, idle closed keys with an empty window make
    /// room; past that, new keys share the breaker `name/_overflow` (counted, logged at ERROR).
    /// No call is ever refused because of the cap.
    ///
    /// ```
    /// use fusebox_runtime::Breaker;
    /// let cfg = Breaker::builder("per-host").max_keys(100).config().unwrap();
    /// assert_eq!(cfg.max_keys(), 100);
    /// assert!(Breaker::builder("per-host").max_keys(0).config().is_err());
    /// ```
    pub fn max_keys(mut self, n: u32) -> Self {
        self.max_keys = n;
        self
    }

    /// Percent of failed calls in the window that opens the breaker (1..=100, default 50).
    pub fn failure_rate(mut self, pct: u8) -> Self {
        self.failure_rate = pct;
        self
    }
    /// Time-based sliding window (default 30 s).
    pub fn window(mut self, d: Duration) -> Self {
        self.window = Some(d);
        self
    }
    /// Count-based window: the last `n` calls (1..=1 000 000).
    pub fn window_calls(mut self, n: u32) -> Self {
        self.window_calls = Some(n);
        self
    }
    /// Calls in the window before any rate is judged (default 20, or the window size if smaller).
    pub fn min_calls(mut self, n: u32) -> Self {
        self.min_calls = Some(n);
        self
    }
    /// A call at least `bound` long is slow; `rate` percent slow calls open the breaker.
    pub fn slow(mut self, bound: Duration, rate: u8) -> Self {
        self.slow_twice |= self.slow.is_some();
        self.slow = Some(SlowRule {
            bound,
            rate,
            strict: false,
        });
        self
    }
    /// Open when the latency percentile `pct` (50, 90, 95, 99...) exceeds `bound`:
    /// more than `100 - pct` percent of calls are slower than `bound`.
    pub fn trip_percentile(mut self, pct: u8, bound: Duration) -> Self {
        self.slow_twice |= self.slow.is_some();
        self.slow = Some(SlowRule {
            bound,
            rate: 100u8.saturating_sub(pct),
            strict: true,
        });
        self
    }
    /// `trip_percentile(50, bound)`.
    pub fn trip_p50(self, bound: Duration) -> Self {
        self.trip_percentile(50, bound)
    }
    /// `trip_percentile(90, bound)`.
    pub fn trip_p90(self, bound: Duration) -> Self {
        self.trip_percentile(90, bound)
    }
    /// `trip_percentile(95, bound)`.
    pub fn trip_p95(self, bound: Duration) -> Self {
        self.trip_percentile(95, bound)
    }
    /// `trip_percentile(99, bound)`.
    pub fn trip_p99(self, bound: Duration) -> Self {
        self.trip_percentile(99, bound)
    }
    /// Per-call timeout; a timed-out call is a failure and is slow.
    pub fn timeout(mut self, d: Duration) -> Self {
        self.timeout = Some(d);
        self
    }
    /// Timeout of trial calls in half-open (default: `timeout`).
    pub fn half_open_timeout(mut self, d: Duration) -> Self {
        self.half_open_timeout = Some(d);
        self
    }
    /// Time open before half-open (default 30 s).
    pub fn open_for(mut self, d: Duration) -> Self {
        self.open_for = d;
        self
    }
    /// Grow repeated open periods by `factor`, never beyond `max`.
    pub fn backoff(mut self, factor: f64, max: Duration) -> Self {
        self.backoff = Some((factor, max));
        self
    }
    /// Share of traffic admitted in half-open, in percent (default 5).
    pub fn half_open_pct(mut self, pct: u8) -> Self {
        self.half_open_pct = Some(pct);
        self
    }
    /// How long half-open samples before judging (default 30 s).
    pub fn half_open_window(mut self, d: Duration) -> Self {
        self.half_open_window = Some(d);
        self
    }
    /// Instead of a share: `n` trial calls, all of which must succeed.
    pub fn half_open_calls(mut self, n: u32) -> Self {
        self.half_open_calls = Some(n);
        self
    }
    /// A breaker away from closed longer than this is `stuck` and logs at ERROR (default 5 min).
    pub fn alert_after(mut self, d: Duration) -> Self {
        self.alert_after = d;
        self
    }

    /// Checks every setting and returns the validated config.
    pub fn config(&self) -> Result<BreakerConfig, ConfigError> {
        check_name(&self.name)?;
        pct("failure_rate", self.failure_rate)?;
        let window = match (self.window, self.window_calls) {
            (Some(_), Some(_)) => return Err(conflict("window", "window_calls")),
            (_, Some(n)) => {
                at_least_one("window_calls", n)?;
                if n > MAX_WINDOW_CALLS {
                    // One word per call is allocated up front: refuse what would abort the process.
                    return Err(ConfigError::OutOfRange {
                        field: "window_calls",
                        value: n.to_string(),
                        expected: "at most 1000000 calls",
                    });
                }
                WindowKind::Calls(n)
            }
            (w, None) => {
                let w = w.unwrap_or(defaults::WINDOW);
                positive("window", w)?;
                WindowKind::Time(w)
            }
        };
        let min_calls = match (self.min_calls, window) {
            (Some(n), WindowKind::Calls(size)) if n > size => {
                return Err(ConfigError::OutOfRange {
                    field: "min_calls",
                    value: n.to_string(),
                    expected: "at most `window_calls`, or the breaker could never judge",
                })
            }
            (Some(n), _) => {
                at_least_one("min_calls", n)?;
                n
            }
            (None, WindowKind::Calls(size)) => defaults::MIN_CALLS.min(size),
            (None, WindowKind::Time(_)) => defaults::MIN_CALLS,
        };
        if self.slow_twice {
            return Err(conflict("slow", "trip_pNN"));
        }
        if let Some(rule) = self.slow {
            positive("slow", rule.bound)?;
            if rule.strict {
                if rule.rate == 0 || rule.rate >= 100 {
                    return Err(ConfigError::OutOfRange {
                        field: "trip_pNN",
                        value: (100 - rule.rate).to_string(),
                        expected: "a percentile from 1 to 99",
                    });
                }
            } else {
                pct("slow_rate", rule.rate)?;
            }
        }
        if let Some(t) = self.timeout {
            positive("timeout", t)?;
        }
        if let Some(t) = self.half_open_timeout {
            positive("half_open_timeout", t)?;
        }
        positive("open_for", self.open_for)?;
        let (backoff, open_for_max) = match self.backoff {
            None => (1.0, self.open_for),
            Some((f, max)) => {
                if !f.is_finite() || f < 1.0 {
                    return Err(ConfigError::OutOfRange {
                        field: "backoff",
                        value: f.to_string(),
                        expected: "a finite factor of at least 1.0",
                    });
                }
                if max < self.open_for {
                    return Err(ConfigError::OutOfRange {
                        field: "open_for_max",
                        value: format!("{max:?}"),
                        expected: "at least `open_for`",
                    });
                }
                (f, max)
            }
        };
        let half_open = match (self.half_open_calls, self.half_open_pct) {
            (Some(_), Some(_)) => return Err(conflict("half_open_calls", "half_open_pct")),
            (Some(_), None) if self.half_open_window.is_some() => {
                return Err(conflict("half_open_calls", "half_open_window"))
            }
            (Some(n), None) => {
                at_least_one("half_open_calls", n)?;
                HalfOpenPolicy::Calls(n)
            }
            (None, p) => {
                let p = p.unwrap_or(defaults::HALF_OPEN_PCT);
                pct("half_open_pct", p)?;
                let window = self.half_open_window.unwrap_or(defaults::HALF_OPEN_WINDOW);
                positive("half_open_window", window)?;
                HalfOpenPolicy::Share { pct: p, window }
            }
        };
        positive("alert_after", self.alert_after)?;
        at_least_one("max_keys", self.max_keys)?;
        if self.max_keys > MAX_KEYS {
            return Err(ConfigError::OutOfRange {
                field: "max_keys",
                value: self.max_keys.to_string(),
                expected: "at most 1000000 keys",
            });
        }
        Ok(BreakerConfig {
            base_len: self.name.len(),
            name: self.name.as_str().into(),
            failure_rate: self.failure_rate,
            window,
            min_calls,
            slow: self.slow,
            timeout: self.timeout,
            half_open_timeout: self.half_open_timeout,
            open_for: self.open_for,
            backoff,
            open_for_max,
            half_open,
            alert_after: self.alert_after,
            max_keys: self.max_keys,
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
}
