//! Snapshots of every breaker and bulkhead: what an operator or a test looks at.

use std::time::Duration;

use crate::breaker::core::{pct, Core};
use crate::breaker::Breaker;
use crate::bulkhead::Bulkhead;
use crate::registry::{registry, KeyedNames};
use crate::state::State;
use crate::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The figures of one breaker at one instant.
///
/// Serialized (feature `serde`) under the field names below, except that durations become
/// seconds as `f64` with an `_s` suffix (`time_in_state_s`, `p50_s`, `p95_s`, `p99_s`) and
/// the rates carry a `_pct` suffix (`failure_rate_pct`, `slow_rate_pct`).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct BreakerMetrics {
    /// Full registry name (`name/key` for keyed breakers).
    pub name: String,
    /// The key of a keyed breaker.
    pub key: Option<String>,
    /// Current state.
    pub state: State,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "time_in_state_s",
            serialize_with = "crate::metrics::export::json::secs"
        )
    )]
    /// Time since the last transition.
    pub time_in_state: Duration,
    /// Every call that asked to go through: the sum of the outcomes below plus `rejected`.
    pub calls: u64,
    /// Calls that returned `Ok`.
    pub succeeded: u64,
    /// Calls that returned a counted `Err`.
    pub failed: u64,
    /// Calls that returned an `Err` the failure predicate does not count.
    pub ignored: u64,
    /// Calls cut off by the timeout (failures).
    pub timed_out: u64,
    /// Calls that panicked (failures).
    pub panicked: u64,
    /// Calls dropped before they finished (not failures).
    pub cancelled: u64,
    /// Calls refused by this breaker (open, forced open, half-open not admitted).
    pub rejected: u64,
    /// Calls admitted by this breaker and then refused by a full bulkhead.
    pub rejected_by_bulkhead: u64,
    /// Calls slower than the slow bound (including those counted while in flight).
    pub slow: u64,
    /// Calls in the current window.
    pub window_calls: u64,
    #[cfg_attr(feature = "serde", serde(rename = "failure_rate_pct"))]
    /// Failed share of the window, in percent.
    pub failure_rate: f64,
    #[cfg_attr(feature = "serde", serde(rename = "slow_rate_pct"))]
    /// Slow share of the window, in percent.
    pub slow_rate: f64,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "p50_s",
            serialize_with = "crate::metrics::export::json::opt_secs"
        )
    )]
    /// Latency percentiles over the window (`None` when the window is empty).
    pub p50: Option<Duration>,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "p95_s",
            serialize_with = "crate::metrics::export::json::opt_secs"
        )
    )]
    /// 95th percentile.
    pub p95: Option<Duration>,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "p99_s",
            serialize_with = "crate::metrics::export::json::opt_secs"
        )
    )]
    /// 99th percentile.
    pub p99: Option<Duration>,
    /// Times the breaker opened.
    pub times_opened: u64,
    /// Away from closed longer than `alert_after`.
    pub stuck: bool,
    /// Registrations of this name with other settings (ignored; the first settings are kept).
    pub conflicts: u64,
    /// Rejected or failed calls answered with the last good value (`stale_for`).
    pub stale_served: u64,
}

impl BreakerMetrics {
    pub(crate) fn of(core: &Core) -> BreakerMetrics {
        let now = core.clock.now();
        let c = &core.counters;
        let load = |a: &AtomicU64| a.load(Relaxed);
        let totals = core.window.totals(now);
        let latency = core.window.latency(now);
        let (succeeded, failed, ignored) = (load(&c.succeeded), load(&c.failed), load(&c.ignored));
        let (timed_out, panicked, cancelled) =
            (load(&c.timeouts), load(&c.panicked), load(&c.cancelled));
        let (rejected, rejected_full) = (load(&c.rejected), load(&c.rejected_full));
        BreakerMetrics {
            name: core.config.name().to_owned(),
            key: core.config.key().map(str::to_owned),
            state: core.state(),
            time_in_state: Duration::from_nanos(now.saturating_sub(core.state_since())),
            calls: succeeded
                + failed
                + ignored
                + timed_out
                + panicked
                + cancelled
                + rejected
                + rejected_full,
            succeeded,
            failed,
            ignored,
            timed_out,
            panicked,
            cancelled,
            rejected,
            rejected_by_bulkhead: rejected_full,
            slow: load(&c.slow),
            window_calls: totals.calls,
            failure_rate: pct(totals.failures, totals.calls),
            slow_rate: pct(totals.slow, totals.calls),
            p50: latency.quantile(0.50),
            p95: latency.quantile(0.95),
            p99: latency.quantile(0.99),
            times_opened: load(&c.times_opened),
            stuck: core.check_stuck(now),
            conflicts: load(&c.conflicts),
            stale_served: load(&c.stale_served),
        }
    }

    /// Counted failures: failed, timed out and panicked calls.
    pub fn failures(&self) -> u64 {
        self.failed + self.timed_out + self.panicked
    }
}

/// The figures of one bulkhead at one instant.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct BulkheadMetrics {
    /// Registry name.
    pub name: String,
    /// Pool size.
    pub pool: usize,
    /// Calls in flight now.
    pub in_flight: usize,
    /// Most calls ever in flight at once.
    pub peak: usize,
    /// Calls that got a slot.
    pub admitted: u64,
    /// Calls refused because the pool was full.
    pub rejected: u64,
    /// Registrations of this name with other settings.
    pub conflicts: u64,
}

impl BulkheadMetrics {
    pub(crate) fn of(b: &Bulkhead) -> BulkheadMetrics {
        let i = &b.0;
        BulkheadMetrics {
            name: b.name().to_owned(),
            pool: b.pool(),
            in_flight: b.in_flight(),
            peak: i.peak.load(Relaxed),
            admitted: i.admitted.load(Relaxed),
            rejected: i.rejected.load(Relaxed),
            conflicts: i.conflicts.load(Relaxed),
        }
    }
}

/// A snapshot of every registered breaker and bulkhead, sorted by name.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Metrics {
    /// Every breaker.
    pub breakers: Vec<BreakerMetrics>,
    /// Every bulkhead.
    pub bulkheads: Vec<BulkheadMetrics>,
    /// Every keyed name (`key = ...`): keys held, the cap, overflowed and evicted keys.
    pub keyed: Vec<KeyedNames>,
}

impl Metrics {
    /// The breaker of that name, if in the snapshot.
    pub fn breaker(&self, name: &str) -> Option<&BreakerMetrics> {
        self.breakers.iter().find(|b| b.name == name)
    }
    /// The bulkhead of that name, if in the snapshot.
    pub fn bulkhead(&self, name: &str) -> Option<&BulkheadMetrics> {
        self.bulkheads.iter().find(|b| b.name == name)
    }
}

/// Takes a snapshot of the global registry.
///
/// ```
/// use fusebox_runtime::{metrics, Breaker, State};
/// Breaker::builder("metrics-doc").build().unwrap();
/// let m = metrics();
/// assert_eq!(m.breaker("metrics-doc").unwrap().state, State::Closed);
/// ```
pub fn metrics() -> Metrics {
    let r = registry();
    Metrics {
        breakers: r.breakers().iter().map(Breaker::metrics).collect(),
        bulkheads: r.bulkheads().iter().map(Bulkhead::metrics).collect(),
        keyed: r.keyed_names(),
    }
}

impl Breaker {
    /// This breaker's figures now.
    pub fn metrics(&self) -> BreakerMetrics {
        BreakerMetrics::of(&self.0)
    }
}

impl Bulkhead {
    /// This bulkhead's figures now.
    pub fn metrics(&self) -> BulkheadMetrics {
        BulkheadMetrics::of(self)
    }
}

/// Breakers away from closed longer than their `alert_after`, for health checks.
pub fn stuck_breakers() -> Vec<BreakerMetrics> {
    metrics().breakers.into_iter().filter(|b| b.stuck).collect()
}
