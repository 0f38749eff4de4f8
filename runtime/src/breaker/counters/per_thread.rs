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
//!   line again. So a breaker whose set is full on two calls in a row in that set on a thread
//!   (no call of another breaker counted in the set between them) takes an entry over
//!   ([`evict`]): the entry's counts move to `All::moved` under the lock every read takes, so
//!   no read sees them twice or not at all. Only the slot's thread evicts, so nothing counts
//!   in the entry meanwhile. Breakers of one set called in turn, more than its entries, never
//!   evict (the shared line, as before): the lock is taken at most once per two calls, and
//!   only when one breaker's calls come in a row in its set. One key missing its set among
//!   keys called in turn would otherwise take an entry over on each of its turns, from the
//!   key that then missed on its own; a breaker whose set is held by breakers no longer
//!   called still takes over, whatever the thread calls in other sets meanwhile.
//! - A breaker only ever sits in its own set (`set_of`): adds, take-overs, reads and
//!   [`forget`] look at those [`WAYS`] entries of each slot only.
//! - A slot has one writer at a time: the thread it was handed to. A thread's slot goes back to
//!   the free list when the thread exits, its counts kept (readers still find them); the next
//!   thread that takes it counts on in them. Slots are never freed: one per thread alive at once.
//! - [`forget`] writes an entry only when its breaker is gone, so no thread counts in it then.
//! - Under loom (the models' threads are not the process's) nothing is counted here.

// Under loom only the fallback is built.
#![cfg_attr(loom, allow(dead_code, unused_imports))]

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};
use std::sync::Mutex;

use crate::sync::lock_std;

/// Sets of entries per slot, as bits of the hash that picks one: a breaker may sit only in
/// its set, so a call looks at [`WAYS`] entries whatever the breakers a thread calls.
const SET_BITS: u32 = 3;
const SETS: usize = 1 << SET_BITS;
/// Entries per set.
const WAYS: usize = 4;
/// Breakers a thread counts for at once (at most [`WAYS`] of one set): a few a service calls
/// (or has open in an outage), or a keyed site's hot keys.
pub(super) const ENTRIES: usize = SETS * WAYS;

/// The refusal reasons counted here, each an index into [`Entry::counts`].
pub(crate) const REASONS: usize = 4;
/// The index of successes in [`Entry::counts`], after the refusal reasons.
pub(crate) const SUCCESS: usize = REASONS;
/// What an entry counts: each refusal reason, then successes.
pub(crate) const KINDS: usize = REASONS + 1;

/// One breaker's refusals and successes on one thread.
struct Entry {
    /// The address of the breaker's `Counters`; 0 while free.
    owner: AtomicUsize,
    counts: [AtomicU64; KINDS],
}

/// One thread's entries, on cache lines of their own (aligned to two: the adjacent-line
/// prefetcher), [`WAYS`] to a set.
#[repr(align(128))]
struct Slot {
    entries: [Entry; ENTRIES],
}

/// The first entry of `owner`'s set: a multiply-shift of its address (8-aligned, so its low
/// bits say nothing).
#[inline]
fn set_of(owner: usize) -> usize {
    let h = ((owner >> 3) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> (64 - SET_BITS)) as usize * WAYS
}

/// What a read adds up, under one lock.
struct All {
    /// Every slot ever made.
    slots: Vec<&'static Slot>,
    /// Counts moved out of entries taken over by another breaker ([`evict`]), by owner, until
    /// the owner drops.
    moved: BTreeMap<usize, [u64; KINDS]>,
}

static ALL: Mutex<All> = Mutex::new(All {
    slots: Vec::new(),
    moved: BTreeMap::new(),
});
/// Slots whose thread has exited.
static FREE: Mutex<Vec<&'static Slot>> = Mutex::new(Vec::new());

/// This thread's slot, taken at its first count and given back as it exits; for each set,
/// the owner whose call, the last one counted in that set on this thread, found no entry free
/// (0: the last call there found its entry); and the way the next eviction takes (round robin).
struct Mine {
    slot: Cell<Option<&'static Slot>>,
    last_miss: [Cell<usize>; SETS],
    next: Cell<usize>,
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
    static MINE: Mine = const {
        Mine {
            slot: Cell::new(None),
            last_miss: [const { Cell::new(0) }; SETS],
            next: Cell::new(0),
        }
    };
}

/// Counts one call of kind `reason` (a refusal reason, or [`SUCCESS`]) for the breaker whose
/// counters are at `owner`, in this thread's slot; `false` if it has no entry to spare yet (the
/// caller bumps the shared counter).
#[inline]
pub(crate) fn add(owner: usize, reason: usize) -> bool {
    #[cfg(not(loom))]
    {
        MINE.try_with(|mine| {
            let slot = match mine.slot.get() {
                Some(slot) => slot,
                None => take_slot(mine),
            };
            let set = set_of(owner);
            if slot.add(set, owner, reason) {
                // A miss counts toward a take-over only if the next call in its set misses
                // too: breakers that share a set and are called in turn never evict each
                // other, but one whose set is held by breakers no longer called takes over.
                mine.last_miss[set / WAYS].set(0);
                true
            } else {
                mine.missed(slot, set, owner, reason)
            }
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
    /// The entries of the set beginning at `set` (the owner's: `set_of`).
    #[inline]
    fn set(&self, set: usize) -> &[Entry] {
        &self.entries[set..set + WAYS]
    }

    /// Counts in `owner`'s entry of `set` (`set_of(owner)`), claiming a free one if it has
    /// none; `false` if the set has neither.
    #[inline]
    fn add(&self, set: usize, owner: usize, reason: usize) -> bool {
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
    fn missed(&self, slot: &Slot, set: usize, owner: usize, reason: usize) -> bool {
        if self.last_miss[set / WAYS].replace(owner) != owner {
            return false;
        }
        let way = self.next.get();
        self.next.set((way + 1) % WAYS);
        evict(&slot.entries[set + way], owner, reason);
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

#[cold]
fn take_slot(mine: &Mine) -> &'static Slot {
    let slot = lock_std(&FREE).pop().unwrap_or_else(|| {
        let slot: &'static Slot = Box::leak(Box::new(Slot {
            entries: std::array::from_fn(|_| Entry {
                owner: AtomicUsize::new(0),
                counts: std::array::from_fn(|_| AtomicU64::new(0)),
            }),
        }));
        lock_std(&ALL).slots.push(slot);
        slot
    });
    mine.slot.set(Some(slot));
    slot
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Owners no live breaker has (counters are 8-aligned): odd addresses.
    /// `n` of them from `first * 2 + 1` on, all in the first set.
    fn owners(first: usize, n: usize) -> Vec<usize> {
        owners_in(0, first, n)
    }

    /// `n` owners from `first * 2 + 1` on whose set is `set`.
    fn owners_in(set: usize, first: usize, n: usize) -> Vec<usize> {
        (first..)
            .map(|i| i * 2 + 1)
            .filter(|o| set_of(*o) == set * WAYS)
            .take(n)
            .collect()
    }

    #[test]
    fn a_thread_counts_here_for_as_many_breakers_as_entries_when_they_spread_over_the_sets() {
        std::thread::spawn(|| {
            let all: Vec<usize> = (0..SETS)
                .flat_map(|set| owners_in(set, 5000, WAYS))
                .collect();
            assert_eq!(all.len(), ENTRIES);
            for round in 0..3 {
                for o in &all {
                    assert!(add(*o, SUCCESS), "round {round}: owner {o} counted here");
                }
            }
            assert!(all.iter().all(|o| sum(*o) == [0, 0, 0, 0, 3]));
            all.iter().for_each(|o| forget(*o));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_breaker_that_finds_no_entry_twice_in_a_row_takes_one_over_and_nothing_is_lost() {
        std::thread::spawn(|| {
            let kept = owners(1000, WAYS);
            for (i, o) in kept.iter().enumerate() {
                (0..=i).for_each(|_| assert!(add(*o, 0)));
            }
            let late = owners(2000, 1)[0];
            assert!(!add(late, 0), "first miss: the shared counter");
            assert!(add(late, 1), "second miss in a row: an entry taken over");
            assert!(add(late, 1), "then counted here");
            assert_eq!(sum(late), [0, 2, 0, 0, 0]);
            for (i, o) in kept.iter().enumerate() {
                assert_eq!(
                    sum(*o),
                    [i as u64 + 1, 0, 0, 0, 0],
                    "owner {i} keeps its counts"
                );
            }
            // The evicted owner counts on (in the entry taken over next), its moved share kept.
            // (A `false` is the caller's to count on the shared line: not here.)
            assert!(!add(kept[0], 0));
            assert!(add(kept[0], 0));
            assert_eq!(sum(kept[0]), [2, 0, 0, 0, 0]);
            kept.iter().chain([&late]).for_each(|o| forget(*o));
            assert!(kept.iter().chain([&late]).all(|o| sum(*o) == [0; KINDS]));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn breakers_in_turn_past_the_entries_never_evict() {
        std::thread::spawn(|| {
            let all = owners(3000, WAYS + 2);
            let counted_here: Vec<bool> = (0..3)
                .flat_map(|_| all.iter().map(|o| add(*o, 0)).collect::<Vec<_>>())
                .collect();
            // The first `WAYS` take their set's entries; the rest miss every time, never twice
            // in a row.
            let expected: Vec<bool> = (0..3)
                .flat_map(|_| (0..all.len()).map(|i| i < WAYS))
                .collect();
            assert_eq!(counted_here, expected);
            all.iter().for_each(|o| forget(*o));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_breaker_missing_among_others_that_count_here_never_takes_an_entry_over() {
        std::thread::spawn(|| {
            let all = owners(6000, WAYS + 1);
            for round in 0..4 {
                let counted_here: Vec<bool> = all.iter().map(|o| add(*o, SUCCESS)).collect();
                let mut expected = vec![true; WAYS];
                expected.push(false);
                assert_eq!(counted_here, expected, "round {round}");
            }
            all.iter().for_each(|o| forget(*o));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_breaker_whose_set_is_held_by_breakers_no_longer_called_takes_over_between_other_calls() {
        std::thread::spawn(|| {
            let stale = owners_in(0, 7000, WAYS);
            stale.iter().for_each(|o| assert!(add(*o, SUCCESS)));
            let (a, b) = (owners_in(1, 7000, 1)[0], owners_in(0, 8000, 1)[0]);
            assert!(add(a, SUCCESS));
            assert!(!add(b, SUCCESS), "first miss: the shared counter");
            assert!(add(a, SUCCESS), "another set's hit");
            assert!(
                add(b, SUCCESS),
                "second miss in its set: an entry taken over"
            );
            assert_eq!(sum(b), [0, 0, 0, 0, 1]);
            assert_eq!(sum(a), [0, 0, 0, 0, 2]);
            assert_eq!(
                stale.iter().map(|o| sum(*o)[SUCCESS]).sum::<u64>(),
                WAYS as u64,
                "the stale owners' counts kept"
            );
            stale.iter().chain([&a, &b]).for_each(|o| forget(*o));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn reads_during_evictions_never_go_back() {
        let owners = owners(4000, WAYS + 1);
        let per_thread = 20_000u64;
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = {
            let (owners, done) = (owners.clone(), done.clone());
            std::thread::spawn(move || {
                let mut last = vec![0; owners.len()];
                while !done.load(Relaxed) {
                    for (o, l) in owners.iter().zip(&mut last) {
                        let now = sum(*o)[0];
                        assert!(now >= *l, "{l} then {now}");
                        *l = now;
                    }
                }
            })
        };
        let shared: Vec<_> = owners.iter().map(|_| AtomicU64::new(0)).collect();
        std::thread::scope(|s| {
            for t in 0..2 {
                let (owners, shared) = (&owners, &shared);
                s.spawn(move || {
                    for i in 0..per_thread {
                        // Pairs of one owner, rotating: an eviction every other call.
                        let k = ((i / 2) as usize + t) % owners.len();
                        if !add(owners[k], 0) {
                            shared[k].fetch_add(1, Relaxed);
                        }
                    }
                });
            }
        });
        done.store(true, Relaxed);
        reader.join().unwrap();
        let total: u64 = owners
            .iter()
            .zip(&shared)
            .map(|(o, c)| sum(*o)[0] + c.load(Relaxed))
            .sum();
        assert_eq!(total, 2 * per_thread);
        owners.iter().for_each(|o| forget(*o));
    }
}
