//! A slot in a bulkhead's pool, given back when the permit is dropped, whatever ended the call.

use std::fmt;

use super::pool::Pool;
use crate::sync::atomic::{AtomicU64, Ordering::Relaxed};
use crate::sync::lock;

/// A slot in a bulkhead's pool, released on drop.
#[must_use = "the slot is released as soon as the permit is dropped"]
pub struct BulkheadPermit<'a> {
    pool: &'a Pool,
    /// When the call started (clock nanoseconds), for an adaptive limit; 0 while not timed.
    pub(super) started: AtomicU64,
    /// Held by a probe of the breaker of this id: listed in the pool's `probes` until dropped.
    probe: Option<usize>,
}

impl<'a> BulkheadPermit<'a> {
    /// A slot already taken from `pool` (counted in `taken`): the permit only gives it back.
    /// Not timed yet: see [`start`](Self::start).
    pub(super) fn taken(pool: &'a Pool) -> Self {
        BulkheadPermit {
            pool,
            started: AtomicU64::new(0),
            probe: None,
        }
    }
    /// A slot taken earlier, at `started`, and held by an owned permit since.
    pub(super) fn resumed(pool: &'a Pool, started: u64) -> Self {
        BulkheadPermit {
            pool,
            started: AtomicU64::new(started),
            probe: None,
        }
    }
    /// Times the holder from now (an adaptive pool only: a fixed one reads no clock).
    pub(crate) fn start(&self) {
        if let Some(a) = &self.pool.adaptive {
            let now = a.now();
            self.started.store(now, Relaxed);
            let pool = self.pool;
            a.started(&pool.limit, pool.slots.taken(), now, &pool.config.name);
        }
    }
    /// Marks the slot as held by a probe of the breaker `id` (its core's address), until
    /// dropped.
    pub(crate) fn held_by_probe(&mut self, id: usize) {
        if self.probe.is_none() {
            self.probe = Some(id);
            lock(&self.pool.probes).push(id);
        }
    }
    /// When the holder started, as [`start`](Self::start) stored it (0: not timed).
    pub(super) fn started(&self) -> u64 {
        self.started.load(Relaxed)
    }
}

impl Drop for BulkheadPermit<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.probe {
            let mut probes = lock(&self.pool.probes);
            if let Some(i) = probes.iter().position(|p| *p == id) {
                probes.swap_remove(i);
            }
        }
        let in_flight = self.pool.slots.give_back();
        if let Some(a) = &self.pool.adaptive {
            a.ended(
                &self.pool.limit,
                in_flight,
                self.started.load(Relaxed),
                &self.pool.config.name,
            );
        }
        if self.pool.max_wait.load(Relaxed) != 0 {
            self.pool.freed.notify_one();
        }
    }
}

impl fmt::Debug for BulkheadPermit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BulkheadPermit")
    }
}
