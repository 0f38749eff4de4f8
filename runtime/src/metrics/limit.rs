//! An adaptive bulkhead's figures: its bounds, the latencies it judges by, and the recent
//! history of its limit (the limit now is [`BulkheadMetrics::pool`](super::BulkheadMetrics)).

use std::time::Duration;

use crate::bulkhead::Bulkhead;
use crate::sync::{atomic::Ordering::Relaxed, lock};

/// How an adaptive bulkhead's limit moved: serialized (feature `serde`) with durations as
/// seconds (`short_latency_s`, `long_latency_s`, and `ago_s` in each history entry).
///
/// ```
/// use fusebox::Bulkhead;
/// let b = Bulkhead::builder("limit-doc").adaptive().pool(8).build_detached().unwrap();
/// let m = b.metrics();
/// let a = m.adaptive.unwrap();
/// assert_eq!((m.pool, a.min_pool, a.max_pool), (8, 1, 200));
/// assert_eq!(a.history.last().unwrap().limit, 8, "the start is the first entry");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct AdaptiveMetrics {
    /// The lowest the limit goes.
    pub min_pool: usize,
    /// The highest the limit goes.
    pub max_pool: usize,
    /// Times the limit changed.
    pub changes: u64,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "short_latency_s",
            serialize_with = "crate::metrics::export::json::opt_secs"
        )
    )]
    /// The last window's average latency (`None` before the first window closed).
    pub short_latency: Option<Duration>,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "long_latency_s",
            serialize_with = "crate::metrics::export::json::opt_secs"
        )
    )]
    /// The long-term latency the windows are compared with.
    pub long_latency: Option<Duration>,
    /// The latest limits, oldest first (at most 64; the start is the first while it fits).
    pub history: Vec<LimitChange>,
}

/// One value the limit took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct LimitChange {
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "ago_s",
            serialize_with = "crate::metrics::export::json::secs"
        )
    )]
    /// How long before the snapshot the limit took this value.
    pub ago: Duration,
    /// The limit from then on.
    pub limit: usize,
}

impl AdaptiveMetrics {
    pub(crate) fn of(b: &Bulkhead) -> Option<AdaptiveMetrics> {
        let a = b.0.adaptive.as_ref()?;
        let now = a.clock.now();
        let (min_pool, max_pool) = a.bounds();
        let est = lock(&a.state);
        let latency = |ns: f64| (ns > 0.0).then(|| Duration::from_nanos(ns as u64));
        Some(AdaptiveMetrics {
            min_pool,
            max_pool,
            changes: a.changes.load(Relaxed),
            short_latency: latency(est.short),
            long_latency: latency(est.long),
            history: est
                .history
                .iter()
                .map(|&(at, limit)| LimitChange {
                    ago: Duration::from_nanos(now.saturating_sub(at)),
                    limit,
                })
                .collect(),
        })
    }
}
