//! A thread's slot of entries and where a breaker's entry sits in it (`set_of`), the slot's
//! thread-local handle ([`Mine`]), and the take-over of an entry by a breaker whose set stays
//! full ([`Mine::missed`], [`evict`]).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};

use super::{ALL, ENTRIES, FREE, KINDS, SETS, SET_BITS, WAYS};
use crate::sync::lock_std;

/// One breaker's refusals and successes on one thread.
pub(super) struct Entry {
    /// The address of the breaker's `Counters`; 0 while free.
    pub(super) owner: AtomicUsize,
    pub(super) counts: [AtomicU64; KINDS],
}

/// One thread's entries, on cache lines of their own (aligned to two: the adjacent-line
/// prefetcher), [`WAYS`] to a set.
#[repr(align(128))]
pub(super) struct Slot {
    entries: [Entry; ENTRIES],
}

/// The set `owner` sits in (0..[`SETS`]): a multiply-shift of its address (8-aligned, so its
/// low bits say nothing).
#[inline]
pub(super) fn set_of(owner: usize) -> usize {
    let h = ((owner >> 3) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> (64 - SET_BITS)) as usize
}

/// This thread's slot, taken at its first count and given back as it exits; for each set,
/// the owner whose call, the last one counted in that set on this thread, found no entry free
/// (0: the last call there found its entry), and the way the set's next eviction takes (round
/// robin).
pub(super) struct Mine {
    pub(super) slot: Cell<Option<&'static Slot>>,
    /// The order in which this thread took its slot among all threads (`add` hands it out):
    /// threads that start one after the other, as a runtime's workers do, have consecutive
    /// numbers.
    pub(super) number: Cell<usize>,
    pub(super) last_miss: [Cell<usize>; SETS],
    next: [Cell<u8>; SETS],
}

impl Drop for Mine {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.get() {
            lock_std(&FREE).push(slot);
        }
    }
}

#[cfg(not(loom))]
thread_local! {
    pub(super) static MINE: Mine = const {
        Mine {
            slot: Cell::new(None),
            number: Cell::new(0),
            last_miss: [const { Cell::new(0) }; SETS],
            next: [const { Cell::new(0) }; SETS],
        }
    };
}

impl Slot {
    /// The entries of `set` (the owner's: `set_of`).
    #[inline]
    pub(super) fn set(&self, set: usize) -> &[Entry] {
        let first = set * WAYS;
        &self.entries[first..first + WAYS]
    }

    /// Counts in `owner`'s entry of `set` (`set_of(owner)`), claiming a free one if it has
    /// none; `false` if the set has neither.
    #[inline]
    pub(super) fn add(&self, set: usize, owner: usize, reason: usize) -> bool {
        let mut free = None;
        for e in self.set(set) {
            // Acquire: an entry seen free was cleared by `forget` first (its counts are zero).
            let at = e.owner.load(Acquire);
            if at == owner {
                // This thread is the entry's only writer: no read-modify-write needed.
                let c = &e.counts[reason];
                c.store(c.load(Relaxed) + 1, Relaxed);
                return true;
            }
            if at == 0 && free.is_none() {
                free = Some(e);
            }
        }
        let Some(e) = free else { return false };
        // Its counts are zero (`forget` cleared them before it freed the entry; loaded with
        // Acquire above). Release: a reader that sees the owner sees those zeros, not the last
        // owner's counts.
        e.owner.store(owner, Release);
        let c = &e.counts[reason];
        c.store(c.load(Relaxed) + 1, Relaxed);
        true
    }
}

impl Mine {
    /// No entry of `set` was free for `owner`: takes one over if the call before in that set
    /// was `owner`'s too and also found none.
    #[cold]
    pub(super) fn missed(&self, slot: &Slot, set: usize, owner: usize, reason: usize) -> bool {
        if self.last_miss[set].replace(owner) != owner {
            return false;
        }
        // Round robin within the set, so a set's take-overs spread over its ways.
        let way = self.next[set].get();
        self.next[set].set((way + 1) % WAYS as u8);
        evict(&slot.entries[set * WAYS + usize::from(way)], owner, reason);
        true
    }
}

/// Gives `entry` (of this thread's slot) to `owner`, counting one call of kind `reason`: its
/// counts move to `All::moved` under the lock every read takes.
#[cold]
fn evict(entry: &Entry, owner: usize, reason: usize) {
    let mut all = lock_std(&ALL);
    let was = entry.owner.load(Relaxed);
    let counts: [u64; KINDS] = std::array::from_fn(|i| entry.counts[i].swap(0, Relaxed));
    if was != 0 && counts.iter().any(|c| *c > 0) {
        let kept = all.moved.entry(was).or_default();
        kept.iter_mut().zip(counts).for_each(|(k, c)| *k += c);
    }
    entry.counts[reason].store(1, Relaxed);
    entry.owner.store(owner, Release);
}

/// Slots taken so far, by any thread.
static TAKEN: AtomicUsize = AtomicUsize::new(0);

#[cold]
pub(super) fn take_slot(mine: &Mine) -> &'static Slot {
    let slot = lock_std(&FREE).pop().unwrap_or_else(new_slot);
    mine.slot.set(Some(slot));
    mine.number.set(TAKEN.fetch_add(1, Relaxed));
    slot
}

/// A slot never used, listed for reads (and, once its thread exits, free for the next).
pub(super) fn new_slot() -> &'static Slot {
    let mut all = lock_std(&ALL);
    let slot: &'static Slot = Box::leak(Box::new(Slot {
        entries: std::array::from_fn(|_| Entry {
            owner: AtomicUsize::new(0),
            counts: std::array::from_fn(|_| AtomicU64::new(0)),
        }),
    }));
    all.slots.push(slot);
    slot
}
