//! The pool behind every handle of one bulkhead: its slots, its waiters and its counters.

use tokio::sync::Notify;

use super::config::BulkheadConfig;
use crate::sync::atomic::{AtomicU64, AtomicUsize};

/// Shared by every clone of a [`Bulkhead`](super::Bulkhead) of one name.
pub(crate) struct Pool {
    pub(crate) config: BulkheadConfig,
    /// Calls in flight: one atomic the loom model checker can see (a semaphore it cannot).
    pub(super) taken: AtomicUsize,
    /// Wakes callers waiting for a slot; only used when `max_wait` is not zero.
    pub(super) freed: Notify,
    pub(crate) peak: AtomicUsize,
    pub(crate) rejected: AtomicU64,
    pub(crate) admitted: AtomicU64,
    pub(crate) conflicts: AtomicU64,
}

impl Pool {
    pub(super) fn new(config: BulkheadConfig) -> Pool {
        Pool {
            taken: AtomicUsize::new(0),
            freed: Notify::new(),
            config,
            peak: AtomicUsize::new(0),
            rejected: AtomicU64::new(0),
            admitted: AtomicU64::new(0),
            conflicts: AtomicU64::new(0),
        }
    }
}
