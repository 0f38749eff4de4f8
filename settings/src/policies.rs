//! The small types a breaker's [`Settings`](crate::Settings) are made of: how its window
//! remembers calls ([`WindowKind`]), when a call is slow ([`SlowRule`]) and how half-open tests
//! the dependency ([`HalfOpenPolicy`]).

use std::time::Duration;

/// How the closed-state window remembers calls.
///
/// ```
/// use std::time::Duration;
/// use fusebox::settings::{Settings, WindowKind};
/// use fusebox::Breaker;
/// assert_eq!(Settings::default().window(), WindowKind::Time(Duration::from_secs(30)));
/// let config = Breaker::builder("window-doc").window_calls(20).config().unwrap();
/// assert_eq!(config.settings().window(), WindowKind::Calls(20));
/// ```
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
///
/// ```
/// use std::time::Duration;
/// use fusebox::settings::SlowRule;
/// // trip_p95 = "500ms": open when *more* than 5 % of calls are slower than 500 ms.
/// let p95 = SlowRule { bound: Duration::from_millis(500), rate: 5, strict: true };
/// assert!(!p95.trips(5, 100));
/// assert!(p95.trips(6, 100));
/// assert!(!p95.is_slow(Duration::from_millis(500)), "p95 at the bound does not exceed it");
/// // slow = "500ms", slow_rate = 5: a call of 500 ms or longer is slow, 5 % of them open.
/// let slow = SlowRule { strict: false, ..p95 };
/// assert!(slow.is_slow(Duration::from_millis(500)) && slow.trips(5, 100));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct SlowRule {
    /// A call taking at least this long is slow (also while still in flight); under a
    /// percentile rule (`strict`), one taking longer than it ([`is_slow`](Self::is_slow)).
    pub bound: Duration,
    /// Percent of slow calls in the window that opens the breaker.
    pub rate: u8,
    /// `trip_pNN` opens only when *more* than `100 - NN` percent are slower than the bound
    /// (p95 > bound); `slow` + `slow_rate` opens at or above the rate, counting calls at
    /// least as long as the bound.
    pub strict: bool,
}

impl SlowRule {
    /// Whether a call of `latency` is slow: at least the bound, or under a percentile rule
    /// longer than it (so calls all at the bound give a p95 *at* it, which does not open).
    pub fn is_slow(&self, latency: Duration) -> bool {
        latency > self.bound || (!self.strict && latency == self.bound)
    }

    /// Whether `slow` slow calls out of `calls` open the breaker.
    pub fn trips(&self, slow: u64, calls: u64) -> bool {
        let lhs = slow * 100;
        let rhs = u64::from(self.rate) * calls;
        if self.strict {
            lhs > rhs
        } else {
            lhs >= rhs
        }
    }
}

/// How a half-open breaker tests the dependency.
///
/// ```
/// use fusebox::settings::HalfOpenPolicy;
/// use fusebox::Breaker;
/// let config = Breaker::builder("half-open-doc").half_open_calls(3).config().unwrap();
/// assert_eq!(config.settings().half_open(), HalfOpenPolicy::Calls(3));
/// ```
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
