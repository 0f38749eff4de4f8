//! The validated settings of one breaker: what a [`BreakerBuilder`](super::BreakerBuilder)
//! produces and every layer above reads.

use std::sync::Arc;
use std::time::Duration;

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

/// The validated settings of one breaker. Built by [`BreakerBuilder`](super::BreakerBuilder);
/// compare two with `==`.
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
    pub(crate) max_keys: u32,
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

    /// For a keyed breaker: how many keys get a breaker of their own (see
    /// [`BreakerBuilder::max_keys`](super::BreakerBuilder::max_keys)).
    pub fn max_keys(&self) -> u32 {
        self.max_keys
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
            && self.max_keys == other.max_keys
    }
}

/// How a half-open breaker tests the dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(rename_all = "snake_case")
)]
pub enum HalfOpenPolicy {
    /// Admit `pct` percent of calls (evenly spread, the first admitted) for `window`, then close
    /// when the trials' failure rate is below the breaker's threshold, else open again.
    Share {
        /// Percent of calls admitted as trials.
        pct: u8,
        /// How long to sample before judging.
        window: Duration,
    },
    /// Admit exactly this many trial calls; close when all succeed, open at the first failure.
    Calls(u32),
}
