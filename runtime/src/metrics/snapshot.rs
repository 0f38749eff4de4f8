//! Snapshots of every breaker and bulkhead: what an operator or a test looks at.

use std::sync::Arc;
use std::time::Duration;

use crate::breaker::Breaker;
use crate::bulkhead::Bulkhead;
use crate::metrics::export::samples::Extra;
use crate::metrics::limit::AdaptiveMetrics;
use crate::metrics::retry::RetryMetrics;
use crate::registry::{registry, KeyedNames};
use crate::settings::SettingInForce;
use crate::sync::atomic::Ordering::Relaxed;

pub use super::breaker::{BreakerMetrics, RejectedByReason};

/// The figures of one bulkhead at one instant.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct BulkheadMetrics {
    /// Registry name.
    pub name: String,
    /// Pool size: the slots there are now (for an adaptive limit, its current value).
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
    /// For `limit = "adaptive"`: its bounds, latencies and recent history.
    pub adaptive: Option<AdaptiveMetrics>,
    // Settings outside the code (issue 29).
    /// Every setting in force, with the code's value and where the one in force came from.
    pub settings: Arc<[SettingInForce]>,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "settings_change_expires_in_s",
            serialize_with = "crate::metrics::export::json::opt_secs"
        )
    )]
    /// Time left of a live settings change given a duration (admin `for`, fleet TTL), as the
    /// breaker's.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::Bulkhead;
    /// use fusebox::settings::Source;
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let b = Bulkhead::builder("bulkhead-expiry-doc").pool(4).build_detached().unwrap();
    /// b.change_settings([("pool", "8")], Source::Admin, Some(Duration::from_secs(600))).unwrap();
    /// assert_eq!(b.metrics().settings_change_expires_in, Some(Duration::from_secs(600)));
    /// # }
    /// ```
    pub settings_change_expires_in: Option<Duration>,
}

impl BulkheadMetrics {
    pub(crate) fn of(b: &Bulkhead) -> BulkheadMetrics {
        // A live change that ran out is reported ended, not ended: a snapshot may be taken on
        // another runtime's clock (`Bulkhead::seen_now`).
        let (pool, settings, settings_change_expires_in) = b.seen_now();
        let i = &b.0;
        BulkheadMetrics {
            name: b.name().to_owned(),
            pool,
            in_flight: b.in_flight(),
            peak: i.peak.load(Relaxed),
            admitted: i.slots.admitted(),
            rejected: i.rejected.load(Relaxed),
            conflicts: i.conflicts.load(Relaxed),
            adaptive: AdaptiveMetrics::of(b),
            settings,
            settings_change_expires_in,
        }
    }
}

/// A snapshot of every registered breaker and bulkhead, sorted by name.
///
/// Taken by [`metrics()`] in a process that joined a fleet (feature `redis`), it also holds the
/// fleet's gauges (`fusebox_fleet_link_up`, `fusebox_fleet_live_instances`,
/// `fusebox_fleet_overrides`), so [`to_prometheus`](Metrics::to_prometheus) and
/// [`export::prometheus`](crate::metrics::export::prometheus) give the same complete text.
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
    /// Every name's retries ([`crate::retry`]).
    pub retries: Vec<RetryMetrics>,
    /// The samples a higher layer adds (fleet mode's gauges): in the Prometheus text and the
    /// `metrics` facade; the fleet's JSON is `GET /fleet`.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub(crate) extra: Vec<Extra>,
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
    /// The retries of that name, if a retry of it was built.
    pub fn retry(&self, name: &str) -> Option<&RetryMetrics> {
        self.retries.iter().find(|r| r.name == name)
    }
}

/// Takes a snapshot of the global registry.
///
/// ```
/// use fusebox::{metrics, Breaker, State};
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
        retries: RetryMetrics::all(),
        extra: crate::metrics::export::extra_samples(),
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
