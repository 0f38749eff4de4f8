//! The pool behind every handle of one bulkhead: its slots, its waiters and its counters.

use std::sync::Arc;

use arc_swap::ArcSwapOption;
use tokio::sync::Notify;

use super::adaptive::Adaptive;
use super::config::BulkheadConfig;
use super::live::Layer;
use super::slots::Slots;
use crate::sync::atomic::{AtomicU64, AtomicUsize};
use crate::sync::Mutex;
use fusebox_settings::PoolLimit;

/// Shared by every clone of a [`Bulkhead`](super::Bulkhead) of one name.
pub(crate) struct Pool {
    pub(crate) config: BulkheadConfig,
    /// Calls in flight and calls ever admitted, in one atomic the loom model checker can see
    /// (a semaphore it cannot): `slots.rs`.
    pub(crate) slots: Slots,
    /// Slots there are now: the pool, or the adaptive limit (read with one relaxed load,
    /// as a fixed pool's field would be).
    pub(crate) limit: AtomicUsize,
    /// The algorithm that moves `limit`; `None` for a fixed pool, whose calls read no clock.
    pub(crate) adaptive: Option<Adaptive>,
    /// Wakes callers waiting for a slot; only used when `max_wait` is not zero.
    pub(super) freed: Notify,
    pub(crate) peak: AtomicUsize,
    /// The breakers whose probes hold slots, one entry per slot (`BulkheadPermit::held_by_probe`,
    /// by the address of the breaker's core, borrowed by the call for as long as the slot is
    /// held, so never reused meanwhile): a probe that finds the pool full with one of its own
    /// breaker's in it goes without a slot (`breaker/call.rs`). Touched by probes only.
    pub(crate) probes: Mutex<Vec<usize>>,
    pub(crate) rejected: AtomicU64,
    pub(crate) conflicts: AtomicU64,
    /// How long a call may wait for a slot now, in nanoseconds (`live.rs` changes it).
    pub(crate) max_wait: AtomicU64,
    /// Settings over the code's (issue 29, `live.rs`), read off the call's path.
    pub(crate) live: ArcSwapOption<Layer>,
    /// Serialises changes of `live`.
    pub(crate) live_writer: Mutex<()>,
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
            slots: Slots::new(),
            limit: AtomicUsize::new(config.pool),
            adaptive,
            freed: Notify::new(),
            max_wait: AtomicU64::new(fusebox_settings::nanos(config.max_wait)),
            live: ArcSwapOption::new(None::<Arc<Layer>>),
            live_writer: Mutex::new(()),
            config,
            peak: AtomicUsize::new(0),
            probes: Mutex::new(Vec::new()),
            rejected: AtomicU64::new(0),
            conflicts: AtomicU64::new(0),
        }
    }
}
