//! The lanes of a time window's call counts (the window's header says why): lane 0 is the
//! slots' own `calls`, each further lane the ten slots' counts on a cache line of its own.

use super::{TimeWindow, SLOTS};
use crate::sync::atomic::AtomicU32;

/// Lanes of the slots' call counts (the module's header): the calls of a success that
/// answered at once go to the calling thread's lane (lane 0 is `Slot::calls`). One under
/// loom, whose models count on the slots alone.
#[cfg(not(loom))]
pub(super) const LANES: usize = 2;
#[cfg(loom)]
pub(super) const LANES: usize = 1;

/// One lane's call counts, slot for slot, on a cache line of its own.
#[repr(align(64))]
pub(super) struct Lane(pub(super) [AtomicU32; SLOTS as usize]);

impl TimeWindow {
    /// The call count of slot `epoch % SLOTS` in `lane`.
    #[inline]
    pub(super) fn lane_calls(&self, epoch: u64, lane: usize) -> &AtomicU32 {
        let i = (epoch % SLOTS) as usize;
        match lane.checked_sub(1) {
            None => &self.store.slots[i].calls,
            Some(l) => &self.store.lanes[l].0[i],
        }
    }

    /// The calls in slot `epoch % SLOTS`, every lane's.
    pub(super) fn calls_in(&self, epoch: u64, order: std::sync::atomic::Ordering) -> u64 {
        let i = (epoch % SLOTS) as usize;
        let more: u64 = self
            .store
            .lanes
            .iter()
            .map(|l| u64::from(l.0[i].load(order)))
            .sum();
        u64::from(self.store.slots[i].calls.load(order)) + more
    }
}
