//! The keys each thread used last at each keyed call site: a small per-thread table from
//! (site, key) to the key's breaker, so a repeated key skips the SipHash, the shard's
//! `arc-swap` load and the map probe (about 250 instructions of a keyed call).
//!
//! - **Never stale.** An entry holds the family's [`generation`](super::keyed::Family) at the
//!   time it was looked up; every removal of a key (eviction at `max_keys`, `evict`,
//!   `evict_keys`) gives the family a new generation, so entries made before it are ignored.
//!   Generations are unique in the process, so an entry also never matches another family.
//! - **Only what the full lookup would return.** An entry is made only for a key's own breaker
//!   whose settings are the site's (vouched or compared): the overflow breaker, a conflict to
//!   count and log, and test scopes' registries always take the full lookup.
//! - **A key is taken in on its second miss.** A set of slots remembers the last keys that
//!   missed there (their hashes only, plain stores); a key that misses again is taken in. So a
//!   stream of ever new keys (or more keys than slots, in turn) costs a hash and a store per
//!   call, not a breaker's reference count taken and dropped.
//! - **Four ways.** A key may sit in any of the four slots of its set (32 sets): eight keys in
//!   turn fill a set past its ways at about one site address in twenty thousand, where with pairs
//!   three of eight keys shared a pair at one site in seventy (and missed on every call).
//! - **Attacker-chosen keys cost a miss, not more.** The slot is picked by a cheap unkeyed
//!   hash, so crafted keys can at worst share slots and miss: the full lookup (SipHash with a
//!   random seed) still takes them, and the table is a fixed size per thread.
//! - **Per thread: no other thread ever writes the table.** A hit through [`get`] clones the
//!   key's `Breaker` (its reference count is shared by every task calling that key). An
//!   integer key's call borrows it instead for its first poll ([`lend`], `loan.rs`: no count
//!   taken); while a loan is out no slot is replaced, and misses meanwhile (a keyed call made
//!   inside the lent one) wait in `deferred` until the last loan ends, each key taken in once.
//!   An `Arc` of the thread's own per entry would spare the count too, but it is an allocation
//!   per thread and key on the key's second call, and a key called once is warm: a warm key
//!   allocates nothing (`benches/tests/allocations.rs`).

use std::cell::{Cell, RefCell};

use crate::breaker::Breaker;

mod loan;

pub(crate) use loan::{lend, Lent};

/// Sets per thread, as bits of the hash that pick one.
const SET_BITS: u32 = 5;
const SETS: usize = 1 << SET_BITS;
/// Slots per set: a key may sit in any of them.
const WAYS: usize = 4;

/// A key as this table compares it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Probe<'a> {
    /// An integer key, by value (its magnitude, and whether it is negative): found without
    /// writing its digits. Its entry's breaker is the one its digits name.
    Int(u64, bool),
    /// A plain key's bytes (see `key_name`): equal to its breaker's key.
    Text(&'a [u8]),
}

/// What an entry keeps of its key.
#[derive(PartialEq, Eq)]
enum Kept {
    Int(u64, bool),
    /// The breaker's own key: compared with the probe's bytes.
    Text,
}

struct Slot {
    /// The hash of site and key: most misses differ here, before the key is compared.
    tag: u64,
    /// Address of the call site's `KeyedSite`.
    site: usize,
    generation: u64,
    key: Kept,
    breaker: Breaker,
}

/// One set: its slots, newest first, and the tags of the last keys that missed there.
struct Set {
    /// The tags of `slots`, way for way (0 for an empty one): a lent key's scan compares
    /// these four words and reads only the slot whose tag matched.
    tags: [u64; WAYS],
    slots: [Option<Slot>; WAYS],
    missed: [u64; WAYS],
}

impl Set {
    /// The newest slot whose tag is `tag`: a key taken in again after its family's
    /// generation moved sits before its stale slot, and a tag shared by two keys (a 64-bit
    /// hash collision) costs one of them a miss, never another key's breaker (the caller
    /// compares the key).
    #[inline(always)]
    fn tagged(&self, tag: u64) -> Option<&Slot> {
        let way = self.tags.iter().position(|t| *t == tag)?;
        self.slots[way].as_ref()
    }

    /// Takes `slot` in as the newest; the oldest leaves (returned, to be dropped outside the
    /// table's borrow).
    fn take_in(&mut self, slot: Slot) -> Option<Slot> {
        self.tags.rotate_right(1);
        self.tags[0] = slot.tag;
        self.slots.rotate_right(1);
        self.slots[0].replace(slot)
    }
}

/// A thread's table, and the misses noted while it was lent.
struct Hot {
    table: RefCell<[Set; SETS]>,
    /// Breakers of the table lent now ([`Lent`]): while any is, no slot is replaced.
    loans: Cell<usize>,
    /// Misses of keyed calls made while a breaker was lent (a keyed fn calling another in its
    /// first poll), which would replace slots under the loan: applied in order when the last
    /// loan ends.
    deferred: RefCell<Vec<Deferred>>,
}

/// A miss to apply once the table is no longer lent.
struct Deferred {
    set: usize,
    slot: Slot,
}

/// Misses kept at most while loans are out: past that, a key is only not taken in yet.
const MAX_DEFERRED: usize = 64;

thread_local! {
    static HOT: Hot = const {
        Hot {
            table: RefCell::new(
                [const {
                    Set {
                        tags: [0; WAYS],
                        slots: [const { None }; WAYS],
                        missed: [0; WAYS],
                    }
                }; SETS],
            ),
            loans: Cell::new(0),
            deferred: RefCell::new(Vec::new()),
        }
    };
}

const K: u64 = 0x9e37_79b9_7f4a_7c15;

/// The hash of site and key (a multiply-xor, 8 bytes at a time), and the key's set (from the
/// hash's top bits).
#[inline]
fn place(site: usize, key: Probe<'_>) -> (u64, usize) {
    let mut h = (site as u64).wrapping_mul(K);
    match key {
        Probe::Int(n, minus) => h = (h ^ n ^ u64::from(minus)).wrapping_mul(K),
        Probe::Text(bytes) => {
            h = (h ^ !(bytes.len() as u64)).wrapping_mul(K);
            let mut chunks = bytes.chunks_exact(8);
            for c in &mut chunks {
                let mut w = [0u8; 8];
                w.copy_from_slice(c);
                h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K).rotate_left(29);
            }
            // Byte by byte: a call to `memcpy` for at most 7 bytes costs more.
            let last = chunks
                .remainder()
                .iter()
                .rev()
                .fold(0u64, |w, b| w << 8 | u64::from(*b));
            h = (h ^ last).wrapping_mul(K);
        }
    }
    // The top bits of a multiplicative hash are its best mixed: keys that differ in one
    // digit ("t0".."t7", 0..8) land in different sets.
    (h, (h >> (64 - SET_BITS)) as usize)
}

#[inline]
fn holds(slot: &Option<Slot>, tag: u64, site: usize, generation: u64, key: Probe<'_>) -> bool {
    slot.as_ref().is_some_and(|s| {
        s.tag == tag
            && s.site == site
            && s.generation == generation
            && match (key, &s.key) {
                (Probe::Int(n, minus), Kept::Int(m, kept_minus)) => n == *m && minus == *kept_minus,
                (Probe::Text(bytes), Kept::Text) => {
                    s.breaker.config().key().map(str::as_bytes) == Some(bytes)
                }
                _ => false,
            }
    })
}

/// The breaker this thread found last for `key` at `site`, if the family is still at
/// `generation`. Inlined into the keyed lookup, so `key` is not passed through memory and read
/// back in other widths (a store-forwarding stall on every keyed call; issue 28).
#[inline(always)]
pub(crate) fn get(site: usize, generation: u64, key: Probe<'_>) -> Option<Breaker> {
    let (tag, set) = place(site, key);
    HOT.try_with(|hot| {
        let hot = hot.table.try_borrow().ok()?;
        let slot = hot[set]
            .slots
            .iter()
            .find(|s| holds(s, tag, site, generation, key))?;
        slot.as_ref().map(|s| s.breaker.clone())
    })
    .ok()
    .flatten()
}

/// After a miss: remembers `breaker` for `key` at `site` (generation read before the lookup
/// that found it) if the key is among the set's last misses, else notes the miss. The newest
/// goes first in its set and the oldest leaves. The caller checked that `breaker` is the key's
/// own (its key is the key's digits or bytes). While the table is lent, the miss waits for the
/// loan's end.
pub(crate) fn missed(site: usize, generation: u64, key: Probe<'_>, breaker: &Breaker) {
    let (tag, set) = place(site, key);
    let slot = || Slot {
        tag,
        site,
        generation,
        key: match key {
            Probe::Int(n, minus) => Kept::Int(n, minus),
            Probe::Text(_) => Kept::Text,
        },
        breaker: breaker.clone(),
    };
    // Dropped after the table is released: a breaker's drop never runs inside the borrow.
    let displaced = HOT.try_with(|hot| {
        if hot.loans.get() == 0 {
            let mut table = hot.table.try_borrow_mut().ok()?;
            return apply(&mut table[set], tag, slot);
        }
        if let Ok(mut d) = hot.deferred.try_borrow_mut() {
            if d.len() < MAX_DEFERRED {
                d.push(Deferred { set, slot: slot() });
            }
        }
        None
    });
    drop(displaced);
}

/// One miss in its set: the key's tag noted, or, missed before, its slot taken in (the
/// slot it displaced returned, to be dropped outside the borrow).
fn apply(set: &mut Set, tag: u64, slot: impl FnOnce() -> Slot) -> Option<Slot> {
    if !set.missed.contains(&tag) {
        set.missed.rotate_right(1);
        set.missed[0] = tag;
        return None;
    }
    set.take_in(slot())
}

/// The misses deferred while the table was lent, applied in order once no loan is left. A
/// key missed several times during the loans is taken in once: a slot it already holds (same
/// site, generation and key) is not doubled.
#[cold]
#[inline(never)]
fn apply_deferred(hot: &Hot) {
    if hot.loans.get() != 0 {
        // A loan is still out: the last one's end applies them.
        return;
    }
    let Ok(mut table) = hot.table.try_borrow_mut() else {
        return;
    };
    let Ok(mut deferred) = hot.deferred.try_borrow_mut() else {
        return;
    };
    // Every breaker left over (displaced, or a miss not taken in) is dropped after the
    // table is released, as in `missed`; the list's capacity is kept for the next loan.
    let mut dropped = Vec::new();
    for d in deferred.drain(..) {
        let set = &mut table[d.set];
        let held = set.slots.iter().flatten().any(|s| {
            s.tag == d.slot.tag
                && s.site == d.slot.site
                && s.generation == d.slot.generation
                && s.key == d.slot.key
                && s.breaker.ptr_eq(&d.slot.breaker)
        });
        if held {
            dropped.push(d.slot);
            continue;
        }
        // As `apply`, with the slot handed back when only its tag is noted.
        if !set.missed.contains(&d.slot.tag) {
            set.missed.rotate_right(1);
            set.missed[0] = d.slot.tag;
            dropped.push(d.slot);
            continue;
        }
        dropped.extend(set.take_in(d.slot));
    }
    drop(deferred);
    drop(table);
    drop(dropped);
}

#[cfg(all(test, not(loom)))]
mod tests;
