//! Refusals and successes counted on the calling thread's own cache line (issue 28: the open
//! refusal and the closed call, contended).
//!
//! A breaker's lifetime counters are one `AtomicU64` each. Every task refused while the
//! breaker is open bumps the same one, and every task whose call succeeds bumps another, so
//! under contention each call waits for a cache line the other cores just wrote: more than
//! the rest of the call costs (a closed `#[breaker]` call, 4 tasks on 2 workers: 250-430 ns
//! with the shared success counter, 100-130 without it). So a thread counts its refusals and
//! successes for a few breakers in a [`Slot`] of its own, with a plain load and store (it is
//! the slot's only writer), and a reader adds every slot's count for the breaker to the shared
//! counter.
//!
//! Invariants:
//! - A count is made in exactly one place, and a count moves only under the lock every
//!   read takes (an entry taken over, below): the sum a reader takes lies between the totals
//!   at the start and the end of its read, as one counter's would. A call that finds no
//!   entry for its breaker, nor one to take, bumps the shared counter, as before.
//! - An entry is claimed for a breaker (by the address of its counters) by the slot's thread
//!   while it holds the breaker, and freed when the breaker is dropped ([`forget`], from
//!   `Counters`'s `Drop`), before its memory can be reused: an address found in an entry is
//!   always that live breaker's. A breaker has at most one entry per slot.
//! - Breakers that never drop (every `#[breaker]`'s) would keep a thread's entries for good,
//!   and a later outage's refusals (or another breaker's successes) would all go to the shared
//!   line again. So a breaker that misses in its set again may take an entry over (`evict`):
//!   the entry's counts move to `All::moved` under the lock every read takes, so no read
//!   sees them twice or not at all. Only the slot's thread evicts, so nothing counts in the
//!   entry meanwhile. Which entry: each carries a stamp (the set's miss count when the thread
//!   last counted in it), and each set notes its last `NOTES` (8) missing breakers with their
//!   miss's number. On a breaker's next noted miss, an entry not counted in since its
//!   previous one is taken when no entry was (nothing else in the set is in use: two misses
//!   in a row, or keys of a set held by breakers no longer called, missing in turn), or when
//!   it has also sat out more than the set's last `IDLE` (8) misses (a key missing between
//!   keys that count here). An entry is safe while its breaker is counted in at least once
//!   every `IDLE` misses of the set, unless some breaker misses twice with no count in the
//!   set between (one breaker's calls in a row, as before): breakers of one set all in use,
//!   in turn or in an order such as `A B C A B C D E D E`, do not evict one another (the
//!   shared line, as before). A breaker whose note more than `NOTES` other misses pushed out
//!   takes nothing over.
//! - A breaker only ever sits in its own set (`set_of`): adds, take-overs, reads and
//!   [`forget`] look at those [`WAYS`] entries of each slot only.
//! - A slot has one writer at a time: the thread it was handed to. A thread's slot goes back to
//!   the free list when the thread exits, its counts kept (readers still find them); the next
//!   thread that takes it counts on in them. Slots are never freed: one per thread alive at once.
//! - [`forget`] writes an entry only when its breaker is gone, so no thread counts in it then.
//! - Under loom (the models' threads are not the process's) nothing is counted here.
//!
//! Here: the shape of a slot (sets and ways), the count of a call ([`add`]) and the reads
//! ([`sum`], [`forget`]). `slot.rs`: a thread's slot, its entries and the take-over.

// Under loom only the fallback is built.
#![cfg_attr(loom, allow(dead_code, unused_imports))]

mod slot;
#[cfg(all(test, not(loom)))]
mod tests;

use std::collections::BTreeMap;
use std::sync::atomic::Ordering::*;
use std::sync::Mutex;

use crate::sync::lock_std;
#[cfg(not(loom))]
use slot::MINE;
use slot::{set_of, take_slot, Slot};

/// Sets of entries per slot, as bits of the hash that picks one: a breaker may sit only in
/// its set, so a call looks at [`WAYS`] entries whatever the breakers a thread calls.
const SET_BITS: u32 = 3;
const SETS: usize = 1 << SET_BITS;
/// Entries per set.
const WAYS: usize = 4;
/// Breakers a thread counts for at once (at most [`WAYS`] of one set): a few a service calls
/// (or has open in an outage), or a keyed site's hot keys.
pub(super) const ENTRIES: usize = SETS * WAYS;

/// The refusal reasons counted here, each an index into [`Entry::counts`](slot::Entry::counts).
pub(crate) const REASONS: usize = 4;
/// The index of successes in [`Entry::counts`](slot::Entry::counts), after the refusal reasons.
pub(crate) const SUCCESS: usize = REASONS;
/// What an entry counts: each refusal reason, then successes.
pub(crate) const KINDS: usize = REASONS + 1;

/// What a read adds up, under one lock.
struct All {
    /// Every slot ever made.
    slots: Vec<&'static Slot>,
    /// Counts moved out of entries taken over by another breaker (`evict`), by owner, until
    /// the owner drops.
    moved: BTreeMap<usize, [u64; KINDS]>,
}

static ALL: Mutex<All> = Mutex::new(All {
    slots: Vec::new(),
    moved: BTreeMap::new(),
});
/// Slots whose thread has exited.
static FREE: Mutex<Vec<&'static Slot>> = Mutex::new(Vec::new());

/// What [`add`] did.
#[derive(Clone, Copy)]
pub(crate) struct Added {
    /// Counted in this thread's slot; `false` if it had no entry to spare yet (the caller
    /// bumps the shared counter).
    pub(crate) here: bool,
    /// This thread's number (its slot's): threads alive at once have different ones, so a
    /// caller can spread another shared write by it (the time window's lanes).
    pub(crate) thread: usize,
}

/// Counts one call of kind `reason` (a refusal reason, or [`SUCCESS`]) for the breaker whose
/// counters are at `owner`, in this thread's slot when it has an entry to spare.
#[inline]
pub(crate) fn add(owner: usize, reason: usize) -> Added {
    #[cfg(not(loom))]
    {
        MINE.try_with(|mine| {
            let slot = match mine.slot.get() {
                Some(slot) => slot,
                None => take_slot(mine),
            };
            let set = set_of(owner);
            let here = match slot.add(set, owner, reason) {
                Some(way) => {
                    mine.counted(set, way);
                    true
                }
                None => mine.missed(slot, set, owner, reason),
            };
            Added {
                here,
                thread: mine.number.get(),
            }
        })
        .unwrap_or(Added {
            here: false,
            thread: 0,
        })
    }
    #[cfg(loom)]
    {
        let _ = (owner, reason);
        Added {
            here: false,
            thread: 0,
        }
    }
}

/// The calls counted in every thread's slot for the breaker whose counters are at `owner`, by
/// kind (each refusal reason, then successes).
pub(crate) fn sum(owner: usize) -> [u64; KINDS] {
    let all = lock_std(&ALL);
    let mut total = all.moved.get(&owner).copied().unwrap_or_default();
    for slot in &all.slots {
        for e in slot.set(set_of(owner)) {
            if e.owner.load(Acquire) == owner {
                for (t, c) in total.iter_mut().zip(&e.counts) {
                    *t += c.load(Relaxed);
                }
            }
        }
    }
    total
}

/// Frees every entry of the breaker whose counters are at `owner`, as they are dropped.
pub(crate) fn forget(owner: usize) {
    let mut all = lock_std(&ALL);
    all.moved.remove(&owner);
    for slot in &all.slots {
        for e in slot.set(set_of(owner)) {
            if e.owner.load(Relaxed) == owner {
                for c in &e.counts {
                    c.store(0, Relaxed);
                }
                e.owner.store(0, Release);
            }
        }
    }
}
