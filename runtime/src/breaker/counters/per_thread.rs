//! Refusals counted on the refusing thread's own cache line (issue 28: the open refusal,
//! contended).
//!
//! A breaker's lifetime counters are one `AtomicU64` each. Every task refused while the
//! breaker is open bumps the same one, so under contention each refusal waits for a cache
//! line the other cores just wrote: more than the rest of the refusal costs. So a thread
//! counts its refusals for a few breakers in a [`Slot`] of its own, with a plain load and store
//! (it is the slot's only writer), and a reader adds every slot's count for the breaker to the
//! shared counter.
//!
//! Invariants:
//! - A refusal is counted in exactly one place, and a count never moves: the sum a reader
//!   takes lies between the totals at the start and the end of its read, as one counter's
//!   would. (A thread with no free entry bumps the shared counter, as before.)
//! - An entry is claimed for a breaker (by the address of its counters) by the slot's thread
//!   while it holds the breaker, and freed only when the breaker is dropped
//!   ([`forget`], from `Counters`'s `Drop`), before its memory can be reused: an address
//!   found in an entry is always that live breaker's. A breaker has at most one entry per slot.
//! - A slot has one writer at a time: the thread it was handed to. A thread's slot goes back to
//!   the free list when the thread exits, its counts kept (readers still find them); the next
//!   thread that takes it counts on in them. Slots are never freed: one per thread alive at once.
//! - [`forget`] writes an entry only when its breaker is gone, so no thread counts in it then.
//! - Under loom (the models' threads are not the process's) nothing is counted here.

// Under loom only the fallback is built.
#![cfg_attr(loom, allow(dead_code, unused_imports))]

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};
use std::sync::Mutex;

use crate::sync::lock_std;

/// Breakers a thread counts for at once: a service has a few breakers open in an outage.
pub(super) const ENTRIES: usize = 4;

/// The refusal reasons counted here, each an index into [`Entry::counts`].
pub(crate) const REASONS: usize = 4;

/// One breaker's refusals on one thread.
struct Entry {
    /// The address of the breaker's `Counters`; 0 while free.
    owner: AtomicUsize,
    counts: [AtomicU64; REASONS],
}

/// One thread's entries, on cache lines of their own (two: the adjacent-line prefetcher).
#[repr(align(128))]
struct Slot {
    entries: [Entry; ENTRIES],
}

/// Every slot ever made (what a reader adds up), and those whose thread has exited.
static SLOTS: Mutex<Vec<&'static Slot>> = Mutex::new(Vec::new());
static FREE: Mutex<Vec<&'static Slot>> = Mutex::new(Vec::new());

/// This thread's slot, taken at its first refusal, given back as it exits.
struct Mine(Cell<Option<&'static Slot>>);

impl Drop for Mine {
    fn drop(&mut self) {
        if let Some(slot) = self.0.get() {
            lock_std(&FREE).push(slot);
        }
    }
}

#[cfg(not(loom))]
thread_local! {
    static MINE: Mine = const { Mine(Cell::new(None)) };
}

/// Counts one refusal for `reason` of the breaker whose counters are at `owner`, in this
/// thread's slot; `false` if it has no entry to spare (the caller bumps the shared counter).
#[inline]
pub(crate) fn add(owner: usize, reason: usize) -> bool {
    #[cfg(not(loom))]
    {
        MINE.try_with(|mine| {
            let slot = match mine.0.get() {
                Some(slot) => slot,
                None => take_slot(mine),
            };
            slot.add(owner, reason)
        })
        .unwrap_or(false)
    }
    #[cfg(loom)]
    {
        let _ = (owner, reason);
        false
    }
}

impl Slot {
    #[inline]
    fn add(&self, owner: usize, reason: usize) -> bool {
        let mut free = None;
        for e in &self.entries {
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

#[cold]
fn take_slot(mine: &Mine) -> &'static Slot {
    let slot = lock_std(&FREE).pop().unwrap_or_else(|| {
        let slot: &'static Slot = Box::leak(Box::new(Slot {
            entries: std::array::from_fn(|_| Entry {
                owner: AtomicUsize::new(0),
                counts: std::array::from_fn(|_| AtomicU64::new(0)),
            }),
        }));
        lock_std(&SLOTS).push(slot);
        slot
    });
    mine.0.set(Some(slot));
    slot
}

/// The refusals counted in every thread's slot for the breaker whose counters are at `owner`,
/// by reason.
pub(crate) fn sum(owner: usize) -> [u64; REASONS] {
    let mut total = [0; REASONS];
    for slot in lock_std(&SLOTS).iter() {
        for e in &slot.entries {
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
    for slot in lock_std(&SLOTS).iter() {
        for e in &slot.entries {
            if e.owner.load(Relaxed) == owner {
                for c in &e.counts {
                    c.store(0, Relaxed);
                }
                e.owner.store(0, Release);
            }
        }
    }
}
