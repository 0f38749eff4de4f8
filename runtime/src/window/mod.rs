//! Sliding windows of recent calls: count-based (the last N) and time-based (the last T).
//!
//! Judging a rate after a call is a few loads, never a scan, and is skipped for a call that
//! cannot raise a rate (see `record`).

mod count;
pub(crate) mod histogram;
mod time;

use std::time::Duration;

use crate::settings::WindowKind;
pub(crate) use count::CountWindow;
use histogram::Counts;
pub(crate) use time::TimeWindow;

/// One finished (or provisionally slow) call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sample {
    pub(crate) failed: bool,
    pub(crate) slow: bool,
    pub(crate) latency: Duration,
}

impl Sample {
    /// A success that answered within its first poll: not timed, so latency zero, never slow.
    pub(crate) const ANSWERED_AT_ONCE: Sample = Sample {
        failed: false,
        slow: false,
        latency: Duration::ZERO,
    };
}

/// Where a sample went, so a call first counted as slow in flight can later add its failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ticket {
    /// Its sequence number in a count window.
    Count(u64),
    /// Its slot's epoch in a time window.
    Time(u64),
    /// Nowhere: the sample was too old for a time window (a slot past it had turned over).
    /// Amending it does nothing.
    Unrecorded,
}

/// Calls, failures and slow calls currently in the window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    pub(crate) calls: u64,
    pub(crate) failures: u64,
    pub(crate) slow: u64,
}

impl Totals {
    /// Running totals may dip transiently under races; clamp them into a consistent shape.
    fn clamped(calls: i64, failures: i64, slow: i64) -> Totals {
        let calls = calls.max(0) as u64;
        Totals {
            calls,
            failures: (failures.max(0) as u64).min(calls),
            slow: (slow.max(0) as u64).min(calls),
        }
    }
}

/// Either kind of window.
pub(crate) enum Window {
    Count(CountWindow),
    Time(TimeWindow),
}

impl Window {
    pub(crate) fn new(kind: WindowKind) -> Window {
        match kind {
            WindowKind::Calls(n) => Window::Count(CountWindow::new(n as usize)),
            WindowKind::Time(d) => Window::Time(TimeWindow::new(d)),
        }
    }

    /// Records a call at `now` (read only by a time window: a count window needs no clock).
    /// The totals come back only when the call could raise a rate, i.e. when there is
    /// something to judge.
    pub(crate) fn record(&self, now: impl FnOnce() -> u64, s: Sample) -> (Ticket, Option<Totals>) {
        match self {
            Window::Count(w) => w.record(s),
            Window::Time(w) => w.record(now(), s),
        }
    }

    /// Records [`Sample::ANSWERED_AT_ONCE`] (the closed path's common case) for a call on
    /// thread number `thread` (`per_thread::Added`); the totals come back only when there is
    /// something to judge.
    #[inline]
    pub(crate) fn record_success(
        &self,
        now: impl FnOnce() -> u64,
        thread: usize,
    ) -> Option<Totals> {
        match self {
            Window::Count(w) => w.record(Sample::ANSWERED_AT_ONCE).1,
            Window::Time(w) => w.record_success(now, thread),
        }
    }

    /// Tells a time window whether a success must be judged: the last judgement saw a rate
    /// at the threshold with too few calls to trip.
    pub(crate) fn arm(&self, on: bool) {
        if let Window::Time(w) = self {
            w.arm(on);
        }
    }

    /// Completes a call first recorded as slow in flight (with `first.latency`): adds its
    /// failure, if any, and its real latency. False when the window no longer holds that
    /// sample at `now` (it aged out, or newer calls pushed it out, while the call ran).
    pub(crate) fn amend(
        &self,
        now: u64,
        t: Ticket,
        first: Duration,
        failed: bool,
        latency: Duration,
    ) -> bool {
        let to = histogram::bucket(latency);
        match (self, t) {
            (Window::Count(w), Ticket::Count(seq)) => w.amend(seq, failed, to),
            (Window::Time(w), Ticket::Time(epoch)) => {
                w.amend(now, epoch, failed, histogram::bucket(first), to)
            }
            _ => false,
        }
    }

    /// Takes out a sample recorded slow in flight (`first`: its latency then), if the window
    /// still holds it: the call ended ignored.
    pub(crate) fn withdraw(&self, t: Ticket, first: Duration) {
        match (self, t) {
            (Window::Count(w), Ticket::Count(seq)) => w.withdraw(seq),
            (Window::Time(w), Ticket::Time(epoch)) => w.withdraw(epoch, histogram::bucket(first)),
            _ => {}
        }
    }

    pub(crate) fn totals(&self, now: u64) -> Totals {
        match self {
            Window::Count(w) => w.totals(),
            Window::Time(w) => w.totals(now),
        }
    }

    /// The totals a reader at `now` sees, expiring nothing (`TimeWindow::totals_view`).
    pub(crate) fn totals_view(&self, now: u64) -> Totals {
        match self {
            Window::Count(w) => w.totals(),
            Window::Time(w) => w.totals_view(now),
        }
    }

    /// The totals and latencies a reader at `now` sees, expiring nothing (a metrics snapshot:
    /// `TimeWindow::totals_view`).
    pub(crate) fn view(&self, now: u64) -> (Totals, Counts) {
        match self {
            Window::Count(w) => (w.totals(), w.latency()),
            Window::Time(w) => (w.totals_view(now), w.latency_view(now)),
        }
    }

    pub(crate) fn reset(&self, now: u64) {
        match self {
            Window::Count(w) => w.reset(),
            Window::Time(w) => w.reset(now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> Sample {
        Sample {
            failed: false,
            slow: false,
            latency: Duration::from_millis(5),
        }
    }
    fn fail() -> Sample {
        Sample {
            failed: true,
            ..ok()
        }
    }

    #[test]
    fn count_window_keeps_the_last_n() {
        let w = Window::new(WindowKind::Calls(10));
        for _ in 0..10 {
            w.record(|| 0, fail());
        }
        assert_eq!(
            w.totals(0),
            Totals {
                calls: 10,
                failures: 10,
                slow: 0
            }
        );
        for _ in 0..7 {
            w.record(|| 0, ok());
        }
        assert_eq!(
            w.totals(0),
            Totals {
                calls: 10,
                failures: 3,
                slow: 0
            }
        );
        w.reset(0);
        assert_eq!(w.totals(0), Totals::default());
    }

    #[test]
    fn time_window_forgets_calls_older_than_the_window() {
        let s = 1_000_000_000u64;
        let w = Window::new(WindowKind::Time(Duration::from_secs(10)));
        w.record(|| 0, fail());
        w.record(|| 5 * s, ok());
        assert_eq!(w.totals(9 * s).calls, 2);
        assert_eq!(
            w.totals(10 * s + 1),
            Totals {
                calls: 1,
                failures: 0,
                slow: 0
            }
        );
        assert_eq!(w.totals(100 * s), Totals::default());
        w.record(|| 100 * s, fail());
        assert_eq!(
            w.totals(100 * s),
            Totals {
                calls: 1,
                failures: 1,
                slow: 0
            }
        );
    }

    #[test]
    fn amend_adds_a_failure_to_the_recorded_call() {
        for kind in [
            WindowKind::Calls(5),
            WindowKind::Time(Duration::from_secs(5)),
        ] {
            let w = Window::new(kind);
            let first = Sample { slow: true, ..ok() };
            let (t, _) = w.record(|| 0, first);
            assert!(w.amend(0, t, first.latency, true, Duration::from_secs(8)));
            assert_eq!(
                w.totals(0),
                Totals {
                    calls: 1,
                    failures: 1,
                    slow: 1
                }
            );
            assert!(w.view(0).1.quantile(0.5).unwrap() > Duration::from_secs(6));
        }
    }

    #[test]
    fn amending_a_sample_too_old_for_the_time_window_changes_nothing() {
        let s = 1_000_000_000u64;
        let w = Window::new(WindowKind::Time(Duration::from_secs(10)));
        // Slots count from the first recorded call.
        w.record(|| 1, ok());
        w.record(|| 100 * s, ok());
        // Slow in flight, but stamped before the window's oldest slot: not recorded.
        let first = Sample { slow: true, ..ok() };
        let (t, _) = w.record(|| 0, first);
        assert_eq!(t, Ticket::Unrecorded);
        assert!(!w.amend(100 * s, t, first.latency, true, Duration::from_secs(8)));
        let one_ok = Totals {
            calls: 1,
            failures: 0,
            slow: 0,
        };
        assert_eq!(w.totals(100 * s), one_ok);
    }

    #[test]
    fn latency_counts_follow_the_window() {
        let w = Window::new(WindowKind::Calls(2));
        w.record(
            || 0,
            Sample {
                latency: Duration::from_secs(8),
                ..ok()
            },
        );
        w.record(|| 0, ok());
        w.record(|| 0, ok());
        let p99 = w.view(0).1.quantile(0.99).unwrap();
        assert!(p99 < Duration::from_millis(10), "{p99:?}");
    }

    #[test]
    fn time_window_percentiles_count_calls_of_the_first_bucket() {
        let w = Window::new(WindowKind::Time(Duration::from_secs(10)));
        let instant = Sample {
            latency: Duration::ZERO,
            ..ok()
        };
        for _ in 0..99 {
            w.record(|| 0, instant);
        }
        let slow = Sample {
            latency: Duration::from_secs(8),
            ..ok()
        };
        w.record(|| 0, slow);
        let c = w.view(0).1;
        assert!(c.quantile(0.5).unwrap() < Duration::from_millis(1));
        assert!(c.quantile(0.99).unwrap() < Duration::from_millis(1));
        assert!(c.quantile(1.0).unwrap() > Duration::from_secs(6));
        assert_eq!(c.0.iter().sum::<u64>(), 100);
        // Both leave with their slot.
        assert_eq!(w.view(10_000_000_001).1.quantile(0.5), None);
    }

    #[test]
    fn time_window_percentiles_never_include_calls_older_than_the_window() {
        let s = 1_000_000_000u64;
        let w = Window::new(WindowKind::Time(Duration::from_secs(10)));
        let slow = Sample {
            latency: Duration::from_secs(8),
            ..ok()
        };
        w.record(|| 0, slow);
        w.record(|| 6 * s, ok());
        let p99 = w.view(9 * s).1.quantile(0.99).unwrap();
        assert!(
            p99 > Duration::from_secs(6),
            "both calls in the window: {p99:?}"
        );
        let p99 = w.view(10 * s + 1).1.quantile(0.99).unwrap();
        assert!(
            p99 < Duration::from_millis(10),
            "the 8 s call left: {p99:?}"
        );
        assert_eq!(w.view(100 * s).1.quantile(0.5), None);
    }
}
