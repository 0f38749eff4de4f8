//! Count-based window: a ring of the last N calls, one atomic word per call.
//!
//! Each entry packs one call in a word (0: an empty entry): from the low bits up, [`FAILED`],
//! [`SLOW`], the latency bucket (`BUCKET_BITS` bits at [`BUCKET_SHIFT`]), and the call's
//! sequence number plus one (at [`SEQ_SHIFT`], so a filled entry is never 0). A writer swaps
//! its entry in and adjusts the running totals by exactly the difference to what it evicted,
//! so the totals always equal the ring's contents once racing writers finish.

use super::histogram::{bucket, Counts, Histogram, BUCKETS};
use super::{Sample, Ticket, Totals};
use crate::sync::atomic::{AtomicI64, AtomicU64, Ordering::*};

/// The call failed.
const FAILED: u64 = 1 << 0;
/// The call was slow.
const SLOW: u64 = 1 << 1;
/// Where the latency bucket starts.
const BUCKET_SHIFT: u32 = 2;
/// Bits of the latency bucket.
const BUCKET_BITS: u32 = 6;
/// The latency bucket's bits, in place.
const BUCKET_MASK: u64 = ((1 << BUCKET_BITS) - 1) << BUCKET_SHIFT;
/// Where the sequence number (plus one) starts: above everything else.
const SEQ_SHIFT: u32 = BUCKET_SHIFT + BUCKET_BITS;

// The fields do not overlap, and every bucket fits its bits.
const _: () = {
    assert!(FAILED & SLOW == 0, "the flags overlap");
    assert!(
        (FAILED | SLOW) >> BUCKET_SHIFT == 0,
        "the flags reach the bucket"
    );
    assert!(
        BUCKETS <= 1 << BUCKET_BITS,
        "the buckets outgrew their bits"
    );
    assert!(
        BUCKET_MASK >> SEQ_SHIFT == 0,
        "the bucket reaches the sequence"
    );
};

/// The latency bucket of an entry.
fn bucket_of(entry: u64) -> usize {
    ((entry & BUCKET_MASK) >> BUCKET_SHIFT) as usize
}

/// Whether an entry holds the call of sequence number `seq`.
fn holds(entry: u64, seq: u64) -> bool {
    entry >> SEQ_SHIFT == seq + 1
}

pub(crate) struct CountWindow {
    entries: Box<[AtomicU64]>,
    /// Boxed so that `Window` is no larger than its time variant: every time-window breaker
    /// would otherwise pay for a count window's figures.
    tally: Box<Tally>,
}

/// The running figures of the ring.
struct Tally {
    next: AtomicU64,
    calls: AtomicI64,
    failures: AtomicI64,
    slow: AtomicI64,
    hist: Histogram,
}

fn encode(seq: u64, s: &Sample) -> u64 {
    let flags = if s.failed { FAILED } else { 0 } | if s.slow { SLOW } else { 0 };
    (seq + 1) << SEQ_SHIFT | (bucket(s.latency) as u64) << BUCKET_SHIFT | flags
}

impl CountWindow {
    pub(crate) fn new(n: usize) -> CountWindow {
        CountWindow {
            entries: (0..n.max(1)).map(|_| AtomicU64::new(0)).collect(),
            tally: Box::new(Tally {
                next: AtomicU64::new(0),
                calls: AtomicI64::new(0),
                failures: AtomicI64::new(0),
                slow: AtomicI64::new(0),
                hist: Histogram::new(),
            }),
        }
    }

    /// Records a call. The totals come back only when this call could raise a rate: it
    /// filled a new entry, or it failed or was slow. A success that evicts an entry cannot
    /// raise either rate, so its caller has nothing to judge (and the totals are not loaded).
    pub(crate) fn record(&self, s: Sample) -> (Ticket, Option<Totals>) {
        let seq = self.tally.next.fetch_add(1, Relaxed);
        let i = (seq % self.entries.len() as u64) as usize;
        let new = encode(seq, &s);
        let old = self.entries[i].swap(new, AcqRel);
        let (from, to) = (bucket_of(old), bucket_of(new));
        let calls = if old == 0 {
            self.tally.hist.add(to);
            Some(self.tally.calls.fetch_add(1, Relaxed) + 1)
        } else {
            // Steady latencies mostly evict an entry of their own bucket: nothing to move.
            if from != to {
                self.tally.hist.sub(from);
                self.tally.hist.add(to);
            }
            None
        };
        let flags = FAILED | SLOW;
        if calls.is_none() && new & flags == 0 {
            // Only a flag of the evicted entry can change: the rates can only fall.
            if old & flags != 0 {
                self.adjust(&self.tally.failures, old, new, FAILED);
                self.adjust(&self.tally.slow, old, new, SLOW);
            }
            return (Ticket::Count(seq), None);
        }
        let failures = self.adjust(&self.tally.failures, old, new, FAILED);
        let slow = self.adjust(&self.tally.slow, old, new, SLOW);
        let calls = calls.unwrap_or_else(|| self.tally.calls.load(Relaxed));
        (
            Ticket::Count(seq),
            Some(Totals::clamped(calls, failures, slow)),
        )
    }

    /// Moves a total by the flag's change between the evicted and the new entry.
    fn adjust(&self, total: &AtomicI64, old: u64, new: u64, flag: u64) -> i64 {
        match (old & flag != 0, new & flag != 0) {
            (false, true) => total.fetch_add(1, Relaxed) + 1,
            (true, false) => total.fetch_sub(1, Relaxed) - 1,
            _ => total.load(Relaxed),
        }
    }

    /// Rewrites a call's entry with its final failure flag and latency, while it is still there;
    /// false when newer calls had pushed it out.
    pub(crate) fn amend(&self, seq: u64, failed: bool, latency_bucket: usize) -> bool {
        let i = (seq % self.entries.len() as u64) as usize;
        let mut cur = self.entries[i].load(Acquire);
        while holds(cur, seq) {
            let new = (cur & !BUCKET_MASK)
                | (latency_bucket as u64) << BUCKET_SHIFT
                | if failed { FAILED } else { 0 };
            match self.entries[i].compare_exchange_weak(cur, new, AcqRel, Acquire) {
                Ok(_) => {
                    self.tally.hist.sub(bucket_of(cur));
                    self.tally.hist.add(latency_bucket);
                    self.adjust(&self.tally.failures, cur, new, FAILED);
                    return true;
                }
                Err(actual) => cur = actual,
            }
        }
        false
    }

    /// Takes a call's entry out, while it is still there: a call recorded slow in flight
    /// that ended ignored takes no place in the window. The slot stays empty until reused.
    pub(crate) fn withdraw(&self, seq: u64) {
        let i = (seq % self.entries.len() as u64) as usize;
        let mut cur = self.entries[i].load(Acquire);
        while holds(cur, seq) {
            match self.entries[i].compare_exchange_weak(cur, 0, AcqRel, Acquire) {
                Ok(_) => {
                    self.tally.hist.sub(bucket_of(cur));
                    self.tally.calls.fetch_sub(1, Relaxed);
                    self.adjust(&self.tally.failures, cur, 0, FAILED);
                    self.adjust(&self.tally.slow, cur, 0, SLOW);
                    return;
                }
                Err(actual) => cur = actual,
            }
        }
    }

    pub(crate) fn totals(&self) -> Totals {
        Totals::clamped(
            self.tally.calls.load(Relaxed),
            self.tally.failures.load(Relaxed),
            self.tally.slow.load(Relaxed),
        )
    }

    /// `(calls, failures, slow)` counted from the entries, to check the running totals.
    #[cfg(loom)]
    pub(crate) fn contents(&self) -> (u64, u64, u64) {
        let mut c = (0, 0, 0);
        for e in self
            .entries
            .iter()
            .map(|e| e.load(Acquire))
            .filter(|e| *e != 0)
        {
            c.0 += 1;
            c.1 += u64::from(e & FAILED != 0);
            c.2 += u64::from(e & SLOW != 0);
        }
        c
    }

    pub(crate) fn latency(&self) -> Counts {
        let mut c = Counts::new();
        self.tally.hist.read_into(&mut c);
        c
    }

    pub(crate) fn reset(&self) {
        for e in self.entries.iter() {
            let old = e.swap(0, AcqRel);
            if old != 0 {
                self.tally.calls.fetch_sub(1, Relaxed);
                self.tally.hist.sub(bucket_of(old));
                if old & FAILED != 0 {
                    self.tally.failures.fetch_sub(1, Relaxed);
                }
                if old & SLOW != 0 {
                    self.tally.slow.fetch_sub(1, Relaxed);
                }
            }
        }
    }
}
