//! The lifetime count of successful calls, derived instead of counted, so that a healthy call
//! adds to no counter of its own: the window already counts every call it records, once.
//!
//! `succeeded = recorded − others + outside`, where `recorded` is the window's lifetime number
//! of recorded calls (a count window's sequence, a time window's expired and live slot counts),
//! `others` the recorded calls that were not successes (bumped *before* their record, so a read
//! that sees the record sees the bump, and never counts a failure as a success), and `outside`
//! the successes the window did not record (trials, late results of an earlier generation).
//! Exact once the calls in flight finish; a read racing a call may lag by that call, and
//! `reported` keeps every read at least as high as the one before (a counter never goes down).

use crate::sync::atomic::{AtomicU64, Ordering::*};

#[derive(Default)]
pub(crate) struct Successes {
    /// Recorded calls that are not (yet) successes: failures, ignored errors, timeouts,
    /// panics, cancellations and calls counted slow in flight until they succeed.
    others: AtomicU64,
    /// Successes that the window did not record.
    outside: AtomicU64,
    /// The highest figure reported so far.
    reported: AtomicU64,
}

impl Successes {
    /// A call that is not a success is about to be recorded in the window.
    pub(crate) fn other(&self) {
        self.others.fetch_add(1, Release);
    }

    /// A call counted by [`other`](Self::other) turned out a success, or was not recorded.
    pub(crate) fn undo_other(&self) {
        self.others.fetch_sub(1, Release);
    }

    /// A success that the window did not record.
    pub(crate) fn outside(&self) {
        self.outside.fetch_add(1, Relaxed);
    }

    /// The lifetime count, from `recorded`, which the caller read just before.
    /// A window retired by a live settings change (`live.rs`) takes its `recorded` calls with
    /// it: they are kept here, so the total never goes down.
    pub(crate) fn retire(&self, recorded: u64) {
        self.outside.fetch_add(recorded, Relaxed);
    }

    pub(crate) fn total(&self, recorded: u64) -> u64 {
        let others = self.others.load(Acquire);
        // `outside` first: it holds a retired window's records (`retire`), which `others` counts
        // the failures of; a transient excess of `others` only lowers one read, never reported.
        let v = (recorded + self.outside.load(Relaxed)).saturating_sub(others);
        self.reported.fetch_max(v, Relaxed).max(v)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn successes_are_the_recorded_calls_less_the_others_plus_the_unrecorded() {
        let s = Successes::default();
        s.other(); // a failure, recorded
        s.outside(); // a trial success
        s.other(); // slow in flight ...
        s.undo_other(); // ... then a success
        assert_eq!(s.total(5), 5 - 1 + 1);
    }

    #[test]
    fn a_read_never_reports_less_than_the_one_before() {
        let s = Successes::default();
        assert_eq!(s.total(10), 10);
        // A read racing a failure's record that has not landed yet.
        s.other();
        assert_eq!(s.total(10), 10);
        assert_eq!(s.total(11), 10);
        assert_eq!(s.total(12), 11);
    }
}
