//! Time-based window: ten slots, each a tenth of the window, expired lazily as time moves.
//!
//! The writer that first sees a new slot epoch wins a CAS on `head` and expires the slots
//! between, subtracting them from the running totals. A call racing that expiry can be lost
//! from the window (never from the lifetime counters): the window is approximate by at most
//! the calls that land in the instant a slot turns over.

use std::time::Duration;

use super::histogram::{bucket, Counts, Histogram};
use super::{Sample, Ticket, Totals};
use crate::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering::*};

pub(crate) const SLOTS: u64 = 10;

struct Slot {
    epoch: AtomicU64,
    calls: AtomicU32,
    failures: AtomicU32,
    slow: AtomicU32,
    hist: Histogram,
}

pub(crate) struct TimeWindow {
    slot_nanos: u64,
    slots: Box<[Slot]>,
    head: AtomicU64,
    calls: AtomicI64,
    failures: AtomicI64,
    slow: AtomicI64,
}

impl TimeWindow {
    pub(crate) fn new(window: Duration, now: u64) -> TimeWindow {
        let slot_nanos = (crate::clock::nanos(window) / SLOTS).max(1);
        let head = now / slot_nanos;
        let slots = (0..SLOTS)
            .map(|_| Slot {
                epoch: AtomicU64::new(0),
                calls: AtomicU32::new(0),
                failures: AtomicU32::new(0),
                slow: AtomicU32::new(0),
                hist: Histogram::new(),
            })
            .collect::<Box<[Slot]>>();
        for e in head.saturating_sub(SLOTS - 1)..=head {
            slots[(e % SLOTS) as usize].epoch.store(e, Relaxed);
        }
        TimeWindow {
            slot_nanos,
            slots,
            head: AtomicU64::new(head),
            calls: AtomicI64::new(0),
            failures: AtomicI64::new(0),
            slow: AtomicI64::new(0),
        }
    }

    fn slot(&self, epoch: u64) -> &Slot {
        &self.slots[(epoch % SLOTS) as usize]
    }

    /// Expires every slot that falls out of the window by `epoch`.
    fn advance(&self, epoch: u64) {
        let mut head = self.head.load(Acquire);
        while epoch > head {
            match self
                .head
                .compare_exchange_weak(head, epoch, AcqRel, Acquire)
            {
                Ok(_) => {
                    let from = (head + 1).max(epoch.saturating_sub(SLOTS - 1));
                    for e in from..=epoch {
                        self.expire(e);
                    }
                    return;
                }
                Err(h) => head = h,
            }
        }
    }

    fn expire(&self, epoch: u64) {
        let s = self.slot(epoch);
        s.epoch.store(epoch, Release);
        self.calls
            .fetch_sub(i64::from(s.calls.swap(0, AcqRel)), Relaxed);
        self.failures
            .fetch_sub(i64::from(s.failures.swap(0, AcqRel)), Relaxed);
        self.slow
            .fetch_sub(i64::from(s.slow.swap(0, AcqRel)), Relaxed);
        let mut drop = Counts::new();
        s.hist.take_into(&mut drop);
    }

    pub(crate) fn record(&self, now: u64, sample: Sample) -> (Ticket, Totals) {
        let epoch = now / self.slot_nanos;
        self.advance(epoch);
        let head = self.head.load(Acquire);
        if epoch + SLOTS <= head {
            // Older than the whole window (a call that started long ago): nothing to add.
            return (Ticket::Time(u64::MAX), self.totals_now());
        }
        let s = self.slot(epoch);
        s.calls.fetch_add(1, Relaxed);
        let calls = self.calls.fetch_add(1, Relaxed) + 1;
        let failures = if sample.failed {
            s.failures.fetch_add(1, Relaxed);
            self.failures.fetch_add(1, Relaxed) + 1
        } else {
            self.failures.load(Relaxed)
        };
        let slow = if sample.slow {
            s.slow.fetch_add(1, Relaxed);
            self.slow.fetch_add(1, Relaxed) + 1
        } else {
            self.slow.load(Relaxed)
        };
        s.hist.add(bucket(sample.latency));
        (Ticket::Time(epoch), Totals::clamped(calls, failures, slow))
    }

    /// Adds a call's final failure and moves its latency from the slow bound to the real one.
    pub(crate) fn amend(&self, epoch: u64, failed: bool, from_bucket: usize, to_bucket: usize) {
        let s = self.slot(epoch);
        if s.epoch.load(Acquire) != epoch {
            return;
        }
        if failed {
            s.failures.fetch_add(1, Relaxed);
            self.failures.fetch_add(1, Relaxed);
        }
        s.hist.sub(from_bucket);
        s.hist.add(to_bucket);
    }

    fn totals_now(&self) -> Totals {
        Totals::clamped(
            self.calls.load(Relaxed),
            self.failures.load(Relaxed),
            self.slow.load(Relaxed),
        )
    }

    pub(crate) fn totals(&self, now: u64) -> Totals {
        self.advance(now / self.slot_nanos);
        self.totals_now()
    }

    /// `(calls, failures)` summed over the slots, to check the running totals.
    #[cfg(loom)]
    pub(crate) fn contents(&self) -> (u64, u64) {
        self.slots.iter().fold((0, 0), |(c, f), s| {
            (
                c + u64::from(s.calls.load(Acquire)),
                f + u64::from(s.failures.load(Acquire)),
            )
        })
    }

    pub(crate) fn latency(&self, now: u64) -> Counts {
        let epoch = now / self.slot_nanos;
        self.advance(epoch);
        let mut c = Counts::new();
        for s in self.slots.iter() {
            if s.epoch.load(Acquire) + SLOTS > epoch {
                s.hist.read_into(&mut c);
            }
        }
        c
    }

    pub(crate) fn reset(&self, now: u64) {
        let epoch = now / self.slot_nanos;
        self.advance(epoch);
        for e in epoch.saturating_sub(SLOTS - 1)..=epoch {
            self.expire(e);
        }
    }
}
