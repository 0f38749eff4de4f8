//! Time-based window: ten slots, each a tenth of the window, expired lazily as time moves.
//!
//! The writer that first sees a new slot epoch wins a CAS on `head` and empties the slots
//! between. A call racing that expiry can be lost from the window (never from the lifetime
//! counters): the window is approximate by at most the calls that land in the instant a slot
//! turns over.
//!
//! Totals are the sum of the ten slots: thirty plain loads of two cache lines cost less than
//! the read-modify-write on a shared running total that they replace. They are summed only
//! when the call could raise a rate: a failed or slow call, a call that turned a slot over
//! (expiry can leave a higher rate), or while the breaker has *armed* the window because its
//! last judgement saw a rate at the threshold with fewer than `min_calls` calls (so the next
//! success, by adding a call, may trip it). A success in a healthy window sums nothing.
//!
//! A success that answered at once (the closed path's common case) reads no exact clock when
//! the coarse clock (`clock/coarse.rs`) surely falls in the head slot: one coarse read, two
//! loads and one add. Near a slot's edge, and on a paused clock, it reads the exact one.
//!
//! That one add is the closed call's only write to memory other threads write too, so under
//! contention each call waited for the line another core had just written (`perf`: most of
//! a contended `#[breaker]` call, issue 28). So the at-once successes are counted in lanes:
//! lane 0 is the slots' own `calls`, and each further lane is the ten slots' call counts on a
//! cache line of its own; a thread counts in lane `thread % LANES`, by the number it took
//! with its per-thread counters (`breaker/counters/per_thread`), so a runtime's workers,
//! which start one after another, alternate. Every read and every expiry covers each lane.
//! Two lanes: a third would put a keyed breaker over 1 KiB (`benches/tests/memory.rs`).
//!
//! Latencies go to two histograms of half a window each (not one per slot), which keeps a
//! breaker under 1 KiB: percentiles cover the last half to the whole window, never older calls.
//! The first bucket (the fastest calls, and every call that answered in its first poll) is
//! not counted per call but derived: a generation's calls in its slots less its timed ones.

use std::time::Duration;

use super::histogram::{bucket, Counts, Histogram};
use super::{Sample, Ticket, Totals};
use crate::clock::coarse;
use crate::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::*};

mod lanes;
use lanes::{Lane, LANES};

pub(crate) const SLOTS: u64 = 10;
/// `origin` before the first write.
const UNSET: u64 = u64::MAX;
/// Slots per histogram generation.
const PER_GEN: u64 = SLOTS / 2;

/// Counts of one slot; which epoch it holds follows from `head` (slot `e % SLOTS` holds
/// epoch `e` while `e + SLOTS > head`).
struct Slot {
    calls: AtomicU32,
    failures: AtomicU32,
    slow: AtomicU32,
}

/// The latencies of half a window: generation `epoch` covers slot epochs
/// `epoch * PER_GEN .. (epoch + 1) * PER_GEN`.
struct Generation {
    epoch: AtomicU64,
    hist: Histogram,
}

/// Everything per slot in one allocation.
struct Store {
    slots: [Slot; SLOTS as usize],
    lanes: [Lane; LANES - 1],
    gens: [Generation; 2],
}

pub(crate) struct TimeWindow {
    slot_nanos: u64,
    /// The clock reading of the window's first recorded call ([`UNSET`] before it): slots
    /// are counted from here, so they turn over a whole number of slots after the first call.
    /// Not the breaker's creation: every annotated breaker is made when the registry is
    /// first touched, on whichever runtime's clock that was, and a paused clock behind that
    /// instant (another test's, which had not moved as far) would put every call in slot 0,
    /// never expiring, until it caught up.
    origin: AtomicU64,
    store: Box<Store>,
    head: AtomicU64,
    /// A success must be judged too (see the module's header).
    armed: AtomicBool,
}

impl TimeWindow {
    pub(crate) fn new(window: Duration) -> TimeWindow {
        let slot_nanos = (crate::clock::nanos(window) / SLOTS).max(1);
        let head = 0;
        let gen = head / PER_GEN;
        let store = Box::new(Store {
            slots: std::array::from_fn(|_| Slot {
                calls: AtomicU32::new(0),
                failures: AtomicU32::new(0),
                slow: AtomicU32::new(0),
            }),
            lanes: std::array::from_fn(|_| Lane(std::array::from_fn(|_| AtomicU32::new(0)))),
            gens: std::array::from_fn(|_| Generation {
                epoch: AtomicU64::new(u64::MAX),
                hist: Histogram::new(),
            }),
        });
        store.gens[(gen % 2) as usize].epoch.store(gen, Relaxed);
        if let Some(prev) = gen.checked_sub(1) {
            store.gens[(prev % 2) as usize].epoch.store(prev, Relaxed);
        }
        TimeWindow {
            slot_nanos,
            origin: AtomicU64::new(UNSET),
            store,
            head: AtomicU64::new(head),
            armed: AtomicBool::new(false),
        }
    }

    /// Clock nanoseconds as nanoseconds since the window's first recorded call, which `now`
    /// is if there was none.
    #[inline]
    fn since_origin(&self, now: u64) -> u64 {
        match self.origin.load(Relaxed) {
            UNSET => self.set_origin(now),
            origin => now.saturating_sub(origin),
        }
    }

    /// Takes `now` as the origin unless a racing first write took its own first.
    #[cold]
    fn set_origin(&self, now: u64) -> u64 {
        match self.origin.compare_exchange(UNSET, now, Relaxed, Relaxed) {
            Ok(_) => 0,
            Err(origin) => now.saturating_sub(origin),
        }
    }

    /// Counts the slots from `origin` rather than from the first recorded call (the loom
    /// models' windows start at time 0).
    #[cfg(loom)]
    pub(crate) fn start_at(&self, origin: u64) {
        self.origin.store(origin, Relaxed);
    }

    /// `since_origin` for everything but a recorded call, which sets no origin: before the
    /// first write every slot is empty, so any epoch reads (and expires) the same.
    fn seen_since_origin(&self, now: u64) -> u64 {
        match self.origin.load(Relaxed) {
            UNSET => 0,
            origin => now.saturating_sub(origin),
        }
    }

    fn slot(&self, epoch: u64) -> &Slot {
        &self.store.slots[(epoch % SLOTS) as usize]
    }

    /// The histogram of slot epoch `epoch`, if its generation is still the one stored.
    fn hist(&self, epoch: u64) -> Option<&Histogram> {
        let gen = epoch / PER_GEN;
        let g = &self.store.gens[(gen % 2) as usize];
        (g.epoch.load(Acquire) == gen).then_some(&g.hist)
    }

    /// Expires every slot that falls out of the window by `epoch`; true if this call did.
    fn advance(&self, epoch: u64) -> bool {
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
                    // Expiry can leave a higher rate behind: the next success is judged too.
                    self.arm(true);
                    return true;
                }
                Err(h) => head = h,
            }
        }
        false
    }

    /// Whether successes must be judged (the breaker's verdict on the last totals).
    pub(crate) fn arm(&self, on: bool) {
        // Read first: the flag rarely changes, and a plain load keeps the line shared.
        if self.armed.load(Relaxed) != on {
            self.armed.store(on, Relaxed);
        }
    }

    /// Empties slot `epoch % SLOTS` for `epoch`, and its histogram generation when `epoch`
    /// starts one.
    fn expire(&self, epoch: u64) {
        let s = self.slot(epoch);
        // Swaps, not stores: a read-modify-write orders with a racing writer's increment,
        // so that increment is either expired with the slot or kept whole, never half of both.
        s.calls.swap(0, AcqRel);
        for l in &self.store.lanes {
            l.0[(epoch % SLOTS) as usize].swap(0, AcqRel);
        }
        s.failures.swap(0, AcqRel);
        s.slow.swap(0, AcqRel);
        if epoch % PER_GEN == 0 {
            let gen = epoch / PER_GEN;
            let g = &self.store.gens[(gen % 2) as usize];
            g.epoch.store(gen, Release);
            let mut drop = Counts::new();
            g.hist.take_into(&mut drop);
        }
    }

    /// Records a call; the totals come back only when it could raise a rate (module header).
    pub(crate) fn record(&self, now: u64, sample: Sample) -> (Ticket, Option<Totals>) {
        let now = self.since_origin(now);
        let head = self.head.load(Acquire);
        // Most calls land in the head slot: one multiply tells, where a division costs ~40 cycles.
        let (epoch, turned, head) =
            if now.wrapping_sub(head.wrapping_mul(self.slot_nanos)) < self.slot_nanos {
                (head, false, head)
            } else {
                let epoch = now / self.slot_nanos;
                let turned = self.advance(epoch);
                (epoch, turned, self.head.load(Acquire))
            };
        if epoch + SLOTS <= head {
            // Older than the whole window (a call that started long ago): nothing to add.
            return (Ticket::Unrecorded, turned.then(|| self.totals_now()));
        }
        let s = self.slot(epoch);
        s.calls.fetch_add(1, Relaxed);
        if sample.failed {
            s.failures.fetch_add(1, Relaxed);
        }
        if sample.slow {
            s.slow.fetch_add(1, Relaxed);
        }
        // The first bucket is not counted here but derived in `latency` (calls less timed
        // ones), so a fast call (one that answered in its first poll) adds to no histogram.
        // A call that answered in its first poll has no latency to sort (the common case).
        let b = if sample.latency.is_zero() {
            0
        } else {
            bucket(sample.latency)
        };
        if b != 0 {
            if let Some(h) = self.hist(epoch) {
                h.add(b);
            }
        }
        let judge = sample.failed || sample.slow || turned || self.armed.load(Relaxed);
        (Ticket::Time(epoch), judge.then(|| self.totals_now()))
    }

    /// Records a success that answered at once (latency zero, not slow): `record` for it,
    /// written out for the closed path. The totals come back only when it must be judged.
    /// Reads the exact clock only when the coarse one cannot tell the slot (`clock/coarse.rs`).
    #[inline]
    pub(crate) fn record_success(
        &self,
        now: impl FnOnce() -> u64,
        thread: usize,
    ) -> Option<Totals> {
        let lane = thread % LANES;
        if let Some(head) = self.surely_head(coarse::now()) {
            self.lane_calls(head, lane).fetch_add(1, Relaxed);
            return self.armed.load(Relaxed).then(|| self.totals_now());
        }
        self.record_success_exactly(now, lane)
    }

    /// `record_success` on the exact clock: near a slot's edge, before the first call, on a
    /// paused clock. Out of line, so that the common case above keeps a small frame.
    #[cold]
    #[inline(never)]
    fn record_success_exactly(&self, now: impl FnOnce() -> u64, lane: usize) -> Option<Totals> {
        let now = now();
        let since = self.since_origin(now);
        let head = self.head.load(Acquire);
        if since.wrapping_sub(head.wrapping_mul(self.slot_nanos)) >= self.slot_nanos {
            // A new slot (or an old one): the general path turns it over.
            return self.record(now, Sample::ANSWERED_AT_ONCE).1;
        }
        self.lane_calls(head, lane).fetch_add(1, Relaxed);
        self.armed.load(Relaxed).then(|| self.totals_now())
    }

    /// The head slot, if all of coarse reading `at` falls in it (the exact time lies within
    /// the reading): then it is the slot an exact read would give. `None` before the first
    /// call (no origin yet), near the slot's edges, and without a reading.
    #[inline]
    fn surely_head(&self, at: Option<coarse::Span>) -> Option<u64> {
        let at = at?;
        let origin = self.origin.load(Relaxed);
        if origin == UNSET {
            return None;
        }
        let head = self.head.load(Acquire);
        let start = head.wrapping_mul(self.slot_nanos);
        let (earliest, latest) = (at.earliest.checked_sub(origin)?, at.latest - origin);
        (earliest >= start && latest < start.saturating_add(self.slot_nanos)).then_some(head)
    }

    /// Adds a call's final failure and moves its latency from the slow bound to the real one;
    /// false when its sample is out of the window at `now` (it aged out while the call ran),
    /// whether or not a later call has reused its slot yet.
    pub(crate) fn amend(
        &self,
        now: u64,
        epoch: u64,
        failed: bool,
        from_bucket: usize,
        to_bucket: usize,
    ) -> bool {
        if epoch.saturating_add(SLOTS) <= self.seen_at(now).1 {
            return false;
        }
        if failed {
            self.slot(epoch).failures.fetch_add(1, Relaxed);
        }
        if let Some(h) = self.hist(epoch) {
            h.sub(from_bucket);
            h.add(to_bucket);
        }
        true
    }

    /// Takes a call recorded slow in flight (at `bucket`) out of its slot, if the slot still
    /// holds its epoch: it ended ignored, so it takes no place in the window. Never below zero,
    /// as a slot reused meanwhile may hold less.
    pub(crate) fn withdraw(&self, epoch: u64, bucket: usize) {
        if epoch.saturating_add(SLOTS) <= self.head.load(Acquire) {
            return;
        }
        let slot = self.slot(epoch);
        for n in [&slot.calls, &slot.slow] {
            let _ = n.fetch_update(Relaxed, Relaxed, |v| v.checked_sub(1));
        }
        if let Some(h) = self.hist(epoch) {
            h.remove(bucket);
        }
    }

    fn totals_now(&self) -> Totals {
        let (mut calls, mut failures, mut slow) = (0i64, 0i64, 0i64);
        for (e, s) in (0..SLOTS).zip(&self.store.slots) {
            calls += self.calls_in(e, Relaxed) as i64;
            failures += i64::from(s.failures.load(Relaxed));
            slow += i64::from(s.slow.load(Relaxed));
        }
        Totals::clamped(calls, failures, slow)
    }

    pub(crate) fn totals(&self, now: u64) -> Totals {
        self.advance(self.seen_since_origin(now) / self.slot_nanos);
        self.totals_now()
    }

    /// The slot epoch a reader at `now` sees as the newest: never behind the head.
    fn seen_at(&self, now: u64) -> (u64, u64) {
        let head = self.head.load(Acquire);
        (
            head,
            (self.seen_since_origin(now) / self.slot_nanos).max(head),
        )
    }

    /// The totals a reader at `now` sees, without expiring anything: a metrics snapshot taken
    /// on another runtime's clock (a parallel test's, far ahead of this breaker's paused one)
    /// must not age the window of calls still recorded on the breaker's own clock, or they
    /// would land behind its head and go unrecorded.
    pub(crate) fn totals_view(&self, now: u64) -> Totals {
        let (head, at) = self.seen_at(now);
        let (mut calls, mut failures, mut slow) = (0i64, 0i64, 0i64);
        for e in (at + 1).saturating_sub(SLOTS)..=head {
            let s = self.slot(e);
            calls += self.calls_in(e, Relaxed) as i64;
            failures += i64::from(s.failures.load(Relaxed));
            slow += i64::from(s.slow.load(Relaxed));
        }
        Totals::clamped(calls, failures, slow)
    }

    /// `(calls, failures)` summed over the slots, to check the running totals.
    #[cfg(loom)]
    pub(crate) fn contents(&self) -> (u64, u64) {
        (0..SLOTS)
            .zip(&self.store.slots)
            .fold((0, 0), |(c, f), (e, s)| {
                (
                    c + self.calls_in(e, Acquire),
                    f + u64::from(s.failures.load(Acquire)),
                )
            })
    }

    /// The latencies a reader at `now` sees, without expiring anything (as `totals_view`).
    pub(crate) fn latency_view(&self, now: u64) -> Counts {
        let (head, at) = self.seen_at(now);
        let gen = at / PER_GEN;
        let mut c = Counts::new();
        for g in &self.store.gens {
            let epoch = g.epoch.load(Acquire);
            // The current generation and the one before it; a stale one was not reused yet.
            if gen.checked_sub(epoch).is_some_and(|age| age < 2) {
                let before: u64 = c.0.iter().sum();
                g.hist.read_into(&mut c);
                let timed = c.0.iter().sum::<u64>() - before;
                // Every slot of these two generations is still in the window: the calls in
                // them that the histogram lacks are the first bucket's (see `record`).
                let calls: u64 = (epoch * PER_GEN..(epoch + 1) * PER_GEN)
                    .filter(|e| *e <= head && e + SLOTS > at)
                    .map(|e| self.calls_in(e, Acquire))
                    .sum();
                c.0[0] += calls.saturating_sub(timed);
            }
        }
        c
    }

    pub(crate) fn reset(&self, now: u64) {
        let epoch = self.seen_since_origin(now) / self.slot_nanos;
        self.advance(epoch);
        for e in epoch.saturating_sub(SLOTS - 1)..=epoch {
            self.expire(e);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
