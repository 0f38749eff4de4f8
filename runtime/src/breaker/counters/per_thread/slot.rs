//! A thread's slot of entries and where a breaker's entry sits in it (`set_of`), the slot's
//! thread-local handle ([`Mine`]), and the take-over of an entry gone quiet by a breaker
//! whose set stays full ([`Mine::missed`], [`evict`]).

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

/// This thread's slot, taken at its first count and given back as it exits, and what the
/// thread knows of each set's use: how many calls missed there, when each entry was last
/// counted in, which breakers missed there last, and the way the next take-over takes.
pub(super) struct Mine {
    pub(super) slot: Cell<Option<&'static Slot>>,
    /// The order in which this thread took its slot among all threads (`add` hands it out):
    /// threads that start one after the other, as a runtime's workers do, have consecutive
    /// numbers.
    pub(super) number: Cell<usize>,
    /// Calls that found no entry in each set, on this thread.
    pub(super) misses: [Cell<u64>; SETS],
    /// For each entry, its set's `misses` when this thread last counted in it: an entry
    /// stamped before a breaker's last miss was not called since.
    pub(super) stamps: [[Cell<u64>; WAYS]; SETS],
    /// The last [`NOTES`] breakers that missed in each set, newest first, with their miss's number
    /// (the set's `misses` then); `(0, 0)` for none.
    missers: [[Cell<(usize, u64)>; NOTES]; SETS],
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
            misses: [const { Cell::new(0) }; SETS],
            stamps: [const { [const { Cell::new(0) }; WAYS] }; SETS],
            missers: [const { [const { Cell::new((0, 0)) }; NOTES] }; SETS],
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
    /// none: the way counted in, `None` if the set has neither.
    #[inline]
    pub(super) fn add(&self, set: usize, owner: usize, reason: usize) -> Option<usize> {
        let mut free = None;
        for (way, e) in self.set(set).iter().enumerate() {
            // Acquire: an entry seen free was cleared by `forget` first (its counts are zero).
            let at = e.owner.load(Acquire);
            if at == owner {
                // This thread is the entry's only writer: no read-modify-write needed.
                let c = &e.counts[reason];
                c.store(c.load(Relaxed) + 1, Relaxed);
                return Some(way);
            }
            if at == 0 && free.is_none() {
                free = Some(way);
            }
        }
        let way = free?;
        let e = &self.set(set)[way];
        // Its counts are zero (`forget` cleared them before it freed the entry; loaded with
        // Acquire above). Release: a reader that sees the owner sees those zeros, not the last
        // owner's counts.
        e.owner.store(owner, Release);
        let c = &e.counts[reason];
        c.store(c.load(Relaxed) + 1, Relaxed);
        Some(way)
    }
}

impl Mine {
    /// `set`'s entry `way` was counted in now.
    #[inline]
    pub(super) fn counted(&self, set: usize, way: usize) {
        self.stamps[set][way].set(self.misses[set].get());
    }

    /// No entry of `set` was free for `owner`: on its second noted miss there, takes over an
    /// entry this thread has not counted in since `owner`'s miss before, if no entry was
    /// counted in since then (the old rule: nothing else in the set is in use), or if the entry
    /// also sat out the last [`IDLE`] misses (its breaker went quiet here, though others are
    /// called). Breakers called in turn, more than the set's ways, find entries counted in
    /// since their last miss, each within fewer misses than that, so they do not evict one
    /// another.
    #[cold]
    pub(super) fn missed(&self, slot: &Slot, set: usize, owner: usize, reason: usize) -> bool {
        let n = self.misses[set].get() + 1;
        self.misses[set].set(n);
        let Some(before) = self.remember(set, owner, n) else {
            return false;
        };
        let stamps = &self.stamps[set];
        let quiet = |w: usize| stamps[w].get() < before;
        let all_quiet = (0..WAYS).all(quiet);
        // Round robin among those, so a set's take-overs spread over its ways.
        let start = usize::from(self.next[set].get());
        let Some(way) = (0..WAYS)
            .map(|i| (start + i) % WAYS)
            .find(|w| quiet(*w) && (all_quiet || n - stamps[*w].get() > IDLE))
        else {
            return false;
        };
        self.next[set].set(((way + 1) % WAYS) as u8);
        stamps[way].set(n);
        evict(&slot.entries[set * WAYS + way], owner, reason);
        true
    }

    /// Notes `owner`'s miss number `n` in `set`, newest first (the oldest note leaves): the
    /// number of its miss before, if it is among the notes.
    fn remember(&self, set: usize, owner: usize, n: u64) -> Option<u64> {
        let notes = &self.missers[set];
        // Up to its own note (or the last), each moves one down, then it goes first.
        let at = notes
            .iter()
            .position(|m| m.get().0 == owner)
            .unwrap_or(NOTES - 1);
        let before = notes[at].get();
        for i in (1..=at).rev() {
            notes[i].set(notes[i - 1].get());
        }
        notes[0].set((owner, n));
        (before.0 == owner).then_some(before.1)
    }
}

/// Misses in a set an entry must sit out, uncounted in, to be taken over while others in
/// the set are in use: breakers that share a set and are all called (in turn, or in any
/// order) come back to their entry within fewer misses than this.
pub(super) const IDLE: u64 = 2 * WAYS as u64;

/// Missing breakers each set notes: a breaker whose note another `NOTES` misses in the set
/// pushed out never takes an entry over (so keys in turn over a stale set get entries when
/// they are at most this many).
pub(super) const NOTES: usize = IDLE as usize;

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
