//! The pool behind every handle of one bulkhead: its slots, its waiters and its counters.

use tokio::sync::Notify;

use super::adaptive::Adaptive;
use super::config::BulkheadConfig;
use crate::sync::atomic::{AtomicU64, AtomicUsize};
use fusebox_settings::PoolLimit;

/// Shared by every clone of a [`Bulkhead`](super::Bulkhead) of one name.
pub(crate) struct Pool {
    pub(crate) config: BulkheadConfig,
    /// Calls in flight: one atomic the loom model checker can see (a semaphore it cannot).
    pub(super) taken: AtomicUsize,
    /// Slots there are now: the pool, or the adaptive limit (read with one relaxed load,
    /// as a fixed pool's field would be).
    pub(crate) limit: AtomicUsize,
    /// The algorithm that moves `limit`; `None` for a fixed pool, whose calls read no clock.
    pub(crate) adaptive: Option<Adaptive>,
    /// Wakes callers waiting for a slot; only used when `max_wait` is not zero.
    pub(super) freed: Notify,
    pub(crate) peak: AtomicUsize,
    pub(crate) rejected: AtomicU64,
    pub(crate) admitted: AtomicU64,
    pub(crate) conflicts: AtomicU64,
}

impl Pool {
    pub(super) fn new(config: BulkheadConfig) -> Pool {
        let adaptive = match config.limit {
            PoolLimit::Adaptive { min_pool, max_pool } => {
                Some(Adaptive::new(config.pool, min_pool, max_pool))
            }
            _ => None,
        };
        Pool {
            taken: AtomicUsize::new(0),
            limit: AtomicUsize::new(config.pool),
            adaptive,
            freed: Notify::new(),
            config,
            peak: AtomicUsize::new(0),
            rejected: AtomicU64::new(0),
            admitted: AtomicU64::new(0),
            conflicts: AtomicU64::new(0),
        }
    }
}
