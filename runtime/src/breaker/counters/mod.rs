//! A breaker's lifetime counters, never reset (Prometheus counters must only grow): each
//! outcome and each refusal bumps exactly one. Refusals and successes are counted on the
//! calling thread's own line when it has room (`per_thread/`), so tasks on many cores
//! calling one breaker do not all write one line; every read adds those counts in.
//!
//! Thread entries know a breaker's counters by their address: a core is placed in its `Arc`
//! (or a shadow's) before its first call and never moved after, and its entries are freed as
//! it drops (`Drop`), before the address can be reused.

mod per_thread;

use crate::state::State;
use crate::sync::atomic::{AtomicU64, Ordering::*};

/// One per outcome and one per refusal reason.
#[derive(Default)]
pub(crate) struct Counters {
    /// Calls that succeeded, counted (measured against deriving them from the window:
    /// BENCHMARKS.md). Only their share counted on no thread's own line: count them with
    /// [`Counters::succeed`], read them with [`Counters::succeeded_and_refused`].
    succeeded: AtomicU64,
    pub(crate) failed: AtomicU64,
    /// Errors excluded by the failure predicate and calls classified ignored.
    pub(crate) ignored: AtomicU64,
    pub(crate) timeouts: AtomicU64,
    pub(crate) panicked: AtomicU64,
    pub(crate) cancelled: AtomicU64,
    /// Refusals by the breaker, by the state that refused ([`Refused`]'s order): `Open`,
    /// `ForcedOpen`, `HalfOpen` (not a trial) and `Closed` (a ramp's, issue 22). Only their
    /// share counted on no thread's own line: read them with [`Counters::refused`].
    rejected: [AtomicU64; per_thread::REASONS],
    pub(crate) rejected_full: AtomicU64,
    pub(crate) slow: AtomicU64,
    pub(crate) times_opened: AtomicU64,
    pub(crate) conflicts: AtomicU64,
    pub(crate) stale_served: AtomicU64,
}

/// Refusals by the breaker, by the state that refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Refused {
    pub(crate) open: u64,
    pub(crate) forced_open: u64,
    pub(crate) half_open: u64,
    /// Closed and ramping traffic back in: outside the ramp's share.
    pub(crate) ramp: u64,
}

impl Refused {
    pub(crate) fn total(&self) -> u64 {
        self.open + self.forced_open + self.half_open + self.ramp
    }
}

impl Counters {
    /// Counts a refusal by `state` (`Open`, `ForcedOpen`, `HalfOpen`, or `Closed` for a ramp's).
    #[inline]
    pub(crate) fn refuse(&self, state: State) {
        let reason = match state {
            State::ForcedOpen => 1,
            State::HalfOpen => 2,
            State::Closed => 3,
            _ => 0,
        };
        if !per_thread::add(self.id(), reason).here {
            bump(&self.rejected[reason]);
        }
    }

    /// Counts a success: on this thread's own line when it has room (a closed call's one
    /// write to the breaker but its window's slot). Returns this thread's number, by which
    /// the window picks the lane it counts the call in (`window/time/`).
    #[inline]
    pub(crate) fn succeed(&self) -> usize {
        let added = per_thread::add(self.id(), per_thread::SUCCESS);
        if !added.here {
            bump(&self.succeeded);
        }
        added.thread
    }

    /// Every success and every refusal by the breaker so far, by state: the shared counters
    /// and every thread's, added up under one lock.
    pub(crate) fn succeeded_and_refused(&self) -> (u64, Refused) {
        let mine = per_thread::sum(self.id());
        let [open, forced_open, half_open, ramp] =
            std::array::from_fn(|i| self.rejected[i].load(Relaxed) + mine[i]);
        let succeeded = self.succeeded.load(Relaxed) + mine[per_thread::SUCCESS];
        let refused = Refused {
            open,
            forced_open,
            half_open,
            ramp,
        };
        (succeeded, refused)
    }

    /// Every refusal by the breaker so far, by state: the shared counters and every thread's.
    pub(crate) fn refused(&self) -> Refused {
        self.succeeded_and_refused().1
    }

    /// Every call that asked to go through, as `BreakerMetrics::calls` adds them up: each
    /// outcome and each refusal. Only grows, and moves with every call that ends.
    pub(crate) fn calls(&self) -> u64 {
        let (succeeded, refused) = self.succeeded_and_refused();
        [
            &self.failed,
            &self.ignored,
            &self.timeouts,
            &self.panicked,
            &self.cancelled,
            &self.rejected_full,
        ]
        .iter()
        .map(|c| c.load(Relaxed))
        .sum::<u64>()
            + succeeded
            + refused.total()
    }

    /// What the thread entries know this breaker by: the counters' address, unique while they
    /// live (entries are freed as they drop).
    fn id(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }
}

impl Drop for Counters {
    fn drop(&mut self) {
        per_thread::forget(self.id());
    }
}

pub(crate) fn bump(c: &AtomicU64) {
    c.fetch_add(1, Relaxed);
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn refuse_on_threads(c: &Arc<Counters>, threads: usize, each: u64, state: State) {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let c = Arc::clone(c);
                std::thread::spawn(move || (0..each).for_each(|_| c.refuse(state)))
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
    }

    #[test]
    fn refusals_from_many_threads_add_up_exactly_after_the_threads_exit() {
        let c = Arc::new(Counters::default());
        refuse_on_threads(&c, 8, 10_000, State::Open);
        assert_eq!(c.refused().open, 80_000);
        // A second wave takes the exited threads' slots and counts on in them.
        refuse_on_threads(&c, 8, 1_000, State::ForcedOpen);
        refuse_on_threads(&c, 3, 7, State::HalfOpen);
        refuse_on_threads(&c, 2, 5, State::Closed);
        let r = c.refused();
        assert_eq!(
            (r.open, r.forced_open, r.half_open, r.ramp),
            (80_000, 8_000, 21, 10)
        );
        assert_eq!(c.calls(), 88_031);
    }

    #[test]
    fn successes_and_refusals_from_many_threads_add_up_exactly_and_apart() {
        let c = Arc::new(Counters::default());
        let handles: Vec<_> = (0..6)
            .map(|t| {
                let c = Arc::clone(&c);
                std::thread::spawn(move || {
                    for i in 0..5_000 {
                        if (i + t) % 5 == 0 {
                            c.refuse(State::Open);
                        } else {
                            c.succeed();
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
        let (succeeded, refused) = c.succeeded_and_refused();
        assert_eq!((succeeded, refused.open), (24_000, 6_000));
        assert_eq!(c.calls(), 30_000);
    }

    #[test]
    fn a_thread_calling_more_breakers_than_it_has_entries_counts_every_success() {
        let all: Vec<Counters> = (0..per_thread::ENTRIES * 2)
            .map(|_| Counters::default())
            .collect();
        for round in 1..=5 {
            // Each twice in a row: some take entries over from others, whose counts move.
            all.iter().for_each(|c| {
                (0..2).for_each(|_| {
                    c.succeed();
                })
            });
            assert!(all.iter().all(|c| c.succeeded_and_refused().0 == 2 * round));
        }
    }

    #[test]
    fn a_read_while_threads_refuse_never_goes_back_nor_past_the_total() {
        let c = Arc::new(Counters::default());
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = {
            let (c, done) = (Arc::clone(&c), Arc::clone(&done));
            std::thread::spawn(move || {
                let mut last = 0;
                while !done.load(Relaxed) {
                    let now = c.refused().open;
                    assert!(now >= last && now <= 40_000, "{last} then {now}");
                    last = now;
                }
            })
        };
        refuse_on_threads(&c, 4, 10_000, State::Open);
        done.store(true, Relaxed);
        reader.join().unwrap();
        assert_eq!(c.refused().open, 40_000);
    }

    #[test]
    fn a_dropped_breakers_refusals_never_pass_to_the_next_at_its_address() {
        for round in 0..200 {
            let c = Box::new(Counters::default());
            (0..3).for_each(|_| c.refuse(State::Open));
            assert_eq!(c.refused().open, 3, "round {round}");
            drop(c);
        }
    }

    #[test]
    fn a_thread_refusing_for_more_breakers_than_it_has_entries_counts_them_all() {
        let all: Vec<Counters> = (0..per_thread::ENTRIES + 3)
            .map(|_| Counters::default())
            .collect();
        for round in 1..=5 {
            all.iter().for_each(|c| c.refuse(State::Open));
            assert!(all.iter().all(|c| c.refused().open == round));
        }
    }
}
