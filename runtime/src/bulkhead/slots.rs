//! The slots taken from a pool and the calls it ever admitted, in one atomic word: taking a
//! slot is one compare-and-swap that counts the admission too, giving it back one subtraction.
//! (A separate lifetime counter cost every call one more read-modify-write on a line every
//! caller shares: BENCHMARKS.md, issue 28.)
//!
//! Layout, from the low bits up: the slots taken now ([`TAKEN_BITS`] bits: a pool holds at
//! most `MAX_POOL` slots, under 2^29, and `taken` never exceeds the largest pool there was),
//! then the admissions modulo 2^[`ADMITTED_BITS`]. The taker whose swap carries the admissions
//! out of the word adds one to `wraps` after it; a reader reads `wraps` before the word, so it
//! may count one wrap short for that instant but never one too many, and reports the larger of
//! that and what it reported before: the lifetime count only grows, and is exact whenever no
//! take is carrying.

use crate::sync::atomic::{AtomicU64, Ordering::*};
use fusebox_settings::defaults::MAX_POOL;

/// Bits of the slots taken now.
const TAKEN_BITS: u32 = 30;
/// The slots-taken field.
const TAKEN: u64 = (1 << TAKEN_BITS) - 1;
/// One admission, in place.
const ADMIT: u64 = 1 << TAKEN_BITS;
/// Bits of the admissions counted in the word.
const ADMITTED_BITS: u32 = u64::BITS - TAKEN_BITS;

const _: () = assert!(
    (MAX_POOL as u64) < TAKEN,
    "the largest pool must fit the slots-taken field"
);

/// See the module's header.
pub(crate) struct Slots {
    word: AtomicU64,
    wraps: AtomicU64,
    reported: AtomicU64,
}

impl Slots {
    pub(crate) fn new() -> Slots {
        Slots {
            word: AtomicU64::new(0),
            wraps: AtomicU64::new(0),
            reported: AtomicU64::new(0),
        }
    }

    /// Takes a slot if fewer than `limit` are taken, counting the admission; the slots taken
    /// with this one.
    #[inline]
    pub(crate) fn try_take(&self, limit: usize) -> Option<usize> {
        let mut cur = self.word.load(Relaxed);
        loop {
            let taken = (cur & TAKEN) as usize;
            if taken >= limit {
                return None;
            }
            // The admissions carry out of the word when they are all ones: counted in `wraps`.
            match self.word.compare_exchange_weak(
                cur,
                cur.wrapping_add(ADMIT + 1),
                Acquire,
                Relaxed,
            ) {
                Ok(_) => {
                    if cur >> TAKEN_BITS == u64::MAX >> TAKEN_BITS {
                        self.wraps.fetch_add(1, Release);
                    }
                    return Some(taken + 1);
                }
                Err(actual) => cur = actual,
            }
        }
    }

    /// Gives a slot back; the slots that were taken, this one included.
    #[inline]
    pub(crate) fn give_back(&self) -> usize {
        (self.word.fetch_sub(1, Release) & TAKEN) as usize
    }

    /// The slots taken now.
    pub(crate) fn taken(&self) -> usize {
        (self.word.load(Relaxed) & TAKEN) as usize
    }

    /// Calls ever admitted.
    pub(crate) fn admitted(&self) -> u64 {
        let wraps = self.wraps.load(Acquire);
        let counted = wraps << ADMITTED_BITS | self.word.load(Acquire) >> TAKEN_BITS;
        self.reported.fetch_max(counted, Relaxed).max(counted)
    }

    /// A word about to carry its admissions out (tests of the wrap).
    #[cfg(test)]
    fn near_wrap(taken: u64) -> Slots {
        let s = Slots::new();
        s.word.store((u64::MAX << TAKEN_BITS) | taken, Relaxed);
        s
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn takes_up_to_the_limit_and_counts_each_admission() {
        let s = Slots::new();
        assert_eq!(
            (s.try_take(2), s.try_take(2), s.try_take(2)),
            (Some(1), Some(2), None)
        );
        assert_eq!((s.taken(), s.admitted()), (2, 2));
        assert_eq!(s.give_back(), 2);
        assert_eq!(s.try_take(2), Some(2));
        assert_eq!((s.give_back(), s.give_back(), s.taken()), (2, 1, 0));
        assert_eq!(s.admitted(), 3, "giving back admits nothing");
    }

    #[test]
    fn the_admissions_carry_into_wraps_and_the_count_only_grows() {
        let s = Slots::near_wrap(1);
        let before = s.admitted();
        assert_eq!(before, (1 << ADMITTED_BITS) - 1);
        assert_eq!(s.try_take(10), Some(2), "the slots taken survive the carry");
        assert_eq!(s.taken(), 2);
        assert_eq!(s.admitted(), before + 1);
        assert_eq!(s.try_take(10), Some(3));
        assert_eq!(s.admitted(), before + 2);
        // A reader between the carry and its `wraps` add counts short: it reports what it
        // reported before instead.
        s.wraps.store(0, Relaxed);
        assert_eq!(s.admitted(), before + 2);
    }
}
