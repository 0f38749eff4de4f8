//! A slot in a bulkhead's pool, given back when the permit is dropped, whatever ended the call.

use std::fmt;

use super::pool::Pool;
use crate::sync::atomic::Ordering::Release;

/// A slot in a bulkhead's pool, released on drop.
#[must_use = "the slot is released as soon as the permit is dropped"]
pub struct BulkheadPermit<'a> {
    pool: &'a Pool,
}

impl<'a> BulkheadPermit<'a> {
    /// A slot already taken from `pool` (counted in `taken`): the permit only gives it back.
    pub(super) fn taken(pool: &'a Pool) -> Self {
        BulkheadPermit { pool }
    }
}

impl Drop for BulkheadPermit<'_> {
    fn drop(&mut self) {
        self.pool.taken.fetch_sub(1, Release);
        if !self.pool.config.max_wait.is_zero() {
            self.pool.freed.notify_one();
        }
    }
}

impl fmt::Debug for BulkheadPermit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BulkheadPermit")
    }
}
