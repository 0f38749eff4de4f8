//! A slot in a bulkhead's pool, given back when the permit is dropped, whatever ended the call.

use std::fmt;

use super::pool::Pool;
use crate::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A slot in a bulkhead's pool, released on drop.
#[must_use = "the slot is released as soon as the permit is dropped"]
pub struct BulkheadPermit<'a> {
    pool: &'a Pool,
    /// When the call started (clock nanoseconds), for an adaptive limit; 0 while not timed.
    pub(super) started: AtomicU64,
    /// Held by a breaker's probe: counted in the pool's `probes` until dropped.
    probe: bool,
}

impl<'a> BulkheadPermit<'a> {
    /// A slot already taken from `pool` (counted in `taken`): the permit only gives it back.
    /// Not timed yet: see [`start`](Self::start).
    pub(super) fn taken(pool: &'a Pool) -> Self {
        BulkheadPermit {
            pool,
            started: AtomicU64::new(0),
            probe: false,
        }
    }
    /// A slot taken earlier, at `started`, and held by an owned permit since.
    pub(super) fn resumed(pool: &'a Pool, started: u64) -> Self {
        BulkheadPermit {
            pool,
            started: AtomicU64::new(started),
            probe: false,
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
    /// Marks the slot as held by a breaker's probe, until dropped.
    pub(crate) fn held_by_probe(&mut self) {
        if !self.probe {
            self.probe = true;
            self.pool.probes.fetch_add(1, Relaxed);
        }
    }
    /// When the holder started, as [`start`](Self::start) stored it (0: not timed).
    pub(super) fn started(&self) -> u64 {
        self.started.load(Relaxed)
    }
}

impl Drop for BulkheadPermit<'_> {
    fn drop(&mut self) {
        if self.probe {
            self.pool.probes.fetch_sub(1, Relaxed);
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
