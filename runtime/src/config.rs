//! Validated breaker settings and the builder that produces them.

use std::sync::Arc;
use std::time::Duration;

use crate::half_open::HalfOpenPolicy;
use crate::ConfigError;

/// How the closed-state window remembers calls.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(rename_all = "snake_case")
)]
pub enum WindowKind {
    /// The calls of the last `Duration`, kept in ten slots.
    Time(Duration),
    /// The last `n` calls.
    Calls(u32),
}

/// When a call counts as slow, and which share of slow calls opens the breaker.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct SlowRule {
    /// A call taking at least this long is slow (also while still in flight).
    pub bound: Duration,
    /// Percent of slow calls in the window that opens the breaker.
    pub rate: u8,
    /// `trip_pNN` opens only when *more* than `100 - NN` percent are slow
    /// (p95 > bound); `slow_rate` opens at or above the rate.
    pub strict: bool,
}

impl SlowRule {
    pub(crate) fn trips(&self, slow: u64, calls: u64) -> bool {
        let lhs = slow * 100;
        let rhs = u64::from(self.rate) * calls;
        if self.strict {
            lhs > rhs
        } else {
            lhs >= rhs
        }
    }
}

/// The validated settings of one breaker. Built by [`BreakerBuilder`]; compare two with `==`.
///
/// ```
/// use std::time::Duration;
/// use fusebox_runtime::Breaker;
/// let cfg = Breaker::builder("payments").trip_p95(Duration::from_millis(500)).config().unwrap();
/// assert_eq!(cfg.name(), "payments");
/// assert_eq!(cfg.slow().unwrap().rate, 5);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct BreakerConfig {
    pub(crate) name: Arc<str>,
    #[cfg_attr(feature = "serde", serde(skip))]
    pub(crate) base_len: usize,
    pub(crate) failure_rate: u8,
    pub(crate) window: WindowKind,
    pub(crate) min_calls: u32,
    pub(crate) slow: Option<SlowRule>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) half_open_timeout: Option<Duration>,
    pub(crate) open_for: Duration,
    pub(crate) backoff: f64,
    pub(crate) open_for_max: Duration,
    pub(crate) half_open: HalfOpenPolicy,
    pub(crate) alert_after: Duration,
}

impl BreakerConfig {
    /// Full registry name (`name/key` for keyed breakers).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The name without the key.
    pub fn base_name(&self) -> &str {
        &self.name[..self.base_len]
    }
    /// The key of a keyed breaker.
    pub fn key(&self) -> Option<&str> {
        self.name.get(self.base_len + 1..)
    }
    /// Failure-rate threshold in percent.
    pub fn failure_rate(&self) -> u8 {
        self.failure_rate
    }
    /// The closed-state window.
    pub fn window(&self) -> WindowKind {
        self.window
    }
    /// Calls in the window before a rate is judged.
    pub fn min_calls(&self) -> u32 {
        self.min_calls
    }
    /// The slow-call rule, if any.
    pub fn slow(&self) -> Option<SlowRule> {
        self.slow
    }
    /// Timeout of a normal call.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }
    /// Timeout of a half-open trial call (falls back to `timeout`).
    pub fn half_open_timeout(&self) -> Option<Duration> {
        self.half_open_timeout.or(self.timeout)
    }
    /// The first open period.
    pub fn open_for(&self) -> Duration {
        self.open_for
    }
    /// The half-open policy.
    pub fn half_open(&self) -> HalfOpenPolicy {
        self.half_open
    }
    /// How long a breaker may stay away from closed before it is `stuck`.
    pub fn alert_after(&self) -> Duration {
        self.alert_after
    }

    /// The open period after `opened_before` consecutive openings: `open_for × backoff^n`, capped.
    pub fn open_period(&self, opened_before: u32) -> Duration {
        if self.backoff <= 1.0 {
            return self.open_for.min(self.open_for_max);
        }
        let factor = self.backoff.powi(opened_before.min(64) as i32);
        let secs = self.open_for.as_secs_f64() * factor;
        let max = self.open_for_max.as_secs_f64();
        if secs.is_finite() && secs < max {
            Duration::from_secs_f64(secs)
        } else {
            self.open_for_max
        }
    }

    /// The same settings under the keyed name `base/key`.
    pub fn with_key(&self, key: &str) -> BreakerConfig {
        let base = self.base_name();
        let mut name = String::with_capacity(base.len() + 1 + key.len());
        name.push_str(base);
        name.push('/');
        name.push_str(key);
        BreakerConfig {
            name: name.into(),
            base_len: base.len(),
            ..self.clone()
        }
    }

    /// True when two configs differ only in their key.
    pub(crate) fn same_settings(&self, other: &BreakerConfig) -> bool {
        // Field by field: this runs on the keyed hot path and must not touch the name's Arc.
        self.failure_rate == other.failure_rate
            && self.window == other.window
            && self.min_calls == other.min_calls
            && self.slow == other.slow
            && self.timeout == other.timeout
            && self.half_open_timeout == other.half_open_timeout
            && self.open_for == other.open_for
            && self.backoff == other.backoff
            && self.open_for_max == other.open_for_max
            && self.half_open == other.half_open
            && self.alert_after == other.alert_after
    }
}

/// Builds a [`BreakerConfig`] (and from it a registered [`Breaker`](crate::Breaker)).
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
}

/// The largest count-based window (8 MB of entries).
pub(crate) const MAX_WINDOW_CALLS: u32 = 1_000_000;

/// Defaults of DESIGN.md, in one place.
pub(crate) mod defaults {
    use std::time::Duration;
    pub const FAILURE_RATE: u8 = 50;
    pub const WINDOW: Duration = Duration::from_secs(30);
    pub const MIN_CALLS: u32 = 20;
    pub const OPEN_FOR: Duration = Duration::from_secs(30);
    pub const HALF_OPEN_PCT: u8 = 5;
    pub const HALF_OPEN_WINDOW: Duration = Duration::from_secs(30);
    pub const ALERT_AFTER: Duration = Duration::from_secs(300);
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
        }
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
        })
    }

    /// Validates, then returns the registry's breaker of this name (creating it if new).
    ///
    /// When a breaker of this name already exists with other settings, the first settings are
    /// kept, the conflict is logged at ERROR and counted in its metrics.
    pub fn build(&self) -> Result<crate::Breaker, ConfigError> {
        Ok(crate::registry().register(self.config()?))
    }

    /// Validates and returns a breaker that is not in the registry (for isolated tests,
    /// or users who keep their own).
    pub fn build_detached(&self) -> Result<crate::Breaker, ConfigError> {
        Ok(crate::Breaker::new(self.config()?))
    }
}

pub(crate) fn check_name(name: &str) -> Result<(), ConfigError> {
    if name.is_empty() {
        return Err(ConfigError::BadName {
            name: name.into(),
            reason: "a name cannot be empty",
        });
    }
    if name.chars().any(char::is_control) {
        return Err(ConfigError::BadName {
            name: name.into(),
            reason: "a name cannot contain control characters",
        });
    }
    Ok(())
}

fn conflict(first: &'static str, second: &'static str) -> ConfigError {
    ConfigError::Conflict { first, second }
}

fn pct(field: &'static str, v: u8) -> Result<(), ConfigError> {
    if (1..=100).contains(&v) {
        Ok(())
    } else {
        Err(ConfigError::OutOfRange {
            field,
            value: v.to_string(),
            expected: "a percentage from 1 to 100",
        })
    }
}

fn at_least_one(field: &'static str, v: u32) -> Result<(), ConfigError> {
    if v >= 1 {
        Ok(())
    } else {
        Err(ConfigError::OutOfRange {
            field,
            value: v.to_string(),
            expected: "at least 1",
        })
    }
}

pub(crate) fn positive(field: &'static str, d: Duration) -> Result<(), ConfigError> {
    if d.is_zero() {
        Err(ConfigError::ZeroDuration { field })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Breaker;

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
