//! The adaptive limit: a pool that sizes itself from the latency of the calls it lets through.
//! The algorithm is documented on [`Bulkhead`](super::Bulkhead#adaptive-limit); this file is
//! its one implementation, and its constants are the ones that page cites.

use std::collections::VecDeque;
use std::time::Duration;

use crate::clock::{nanos, Clock};
use crate::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use crate::sync::Mutex;

/// Calls that must end before a window closes (Netflix `WindowedLimit`'s `windowSize`), or
/// the limit if smaller.
pub(crate) const WINDOW_CALLS: u64 = 10;
/// The shortest window (Envoy's adaptive concurrency `concurrency_update_interval`).
pub(crate) const WINDOW_MIN: Duration = Duration::from_millis(100);
/// How much slower than the long-term latency a window may be before the limit shrinks.
pub(crate) const TOLERANCE: f64 = 1.5;
/// Calls the limit may grow by per window (Gradient2's `queueSize`, default 4).
pub(crate) const QUEUE: f64 = 4.0;
/// Windows the long-term latency averages over (Gradient2's `longWindow`, default 600).
pub(crate) const LONG_WINDOWS: f64 = 600.0;
/// Windows whose plain average seeds the long-term latency (Gradient2's warm-up, 10).
pub(crate) const WARMUP: u32 = 10;
/// Limit changes kept for the snapshot.
pub(crate) const HISTORY: usize = 64;
/// How many long-term latencies may pass without a call ending, while calls keep starting,
/// before the limit is cut to the calls in flight (the stall guard, below). The guard beats
/// the limit's filling only while `(STALL_LATENCIES + 1) x` the calls normally in flight stay
/// below the limit: at 4, a 40 ms dependency at 100 calls/s (4 in flight of 20) filled all 20
/// before the guard looked (tests/outside_m/stall_guard.rs). At 2 no call ends for twice the usual
/// latency only when every call in flight is that much slower, a slowdown the gradient cuts
/// for anyway.
pub(crate) const STALL_LATENCIES: f64 = 2.0;
/// The fewest calls in flight that the stall guard cuts the limit to: fewer than Gradient2's
/// queue say too little to act on (two slow calls at once are common, four are not).
pub(crate) const STALL_CALLS: usize = 4;

/// The limit's moving parts, shared by every handle of one bulkhead.
pub(crate) struct Adaptive {
    pub(crate) clock: Clock,
    /// The bounds in force (`min_pool`, `max_pool`): the code's, or a live change's
    /// (`live.rs`, issue 29), stored under `state`'s lock and read by the window that closes.
    min: AtomicUsize,
    max: AtomicUsize,
    /// Latency summed over the open window, in nanoseconds.
    sum: AtomicU64,
    /// Calls ended in the open window.
    ended: AtomicU64,
    /// When the open window opened (clock nanoseconds).
    opened: AtomicU64,
    pub(crate) changes: AtomicU64,
    /// When the pool last made progress (clock nanoseconds): a timed call ended, or the
    /// first call timed since the pool was last empty started. 0: empty since.
    progress: AtomicU64,
    /// How long calls may go without ending before the stall guard acts (ns):
    /// `STALL_LATENCIES` long-term latencies, at least `WINDOW_MIN`; never before a window.
    stall_after: AtomicU64,
    /// Touched once per window by the call that closes it; never on a call's own path.
    pub(crate) state: Mutex<Estimate>,
}

/// What the algorithm remembers between windows.
pub(crate) struct Estimate {
    limit: f64,
    /// Long-term latency (ns): an exponential average of the windows' averages.
    pub(crate) long: f64,
    /// The last window's average latency (ns).
    pub(crate) short: f64,
    windows: u32,
    /// The limit before the current slow spell's first cut (0: none to give back).
    restore: f64,
    /// `(clock nanoseconds, limit)` of the latest changes, oldest first.
    pub(crate) history: VecDeque<(u64, usize)>,
}

impl Adaptive {
    pub(crate) fn new(start: usize, min: usize, max: usize) -> Adaptive {
        let clock = Clock::new();
        let mut history = VecDeque::with_capacity(HISTORY);
        // The start is a value the limit took now: at 0 (the clock's base, set well in the
        // past) the snapshot said the pool had started about a week ago.
        history.push_back((clock.now(), start));
        Adaptive {
            clock,
            min: AtomicUsize::new(min),
            max: AtomicUsize::new(max),
            sum: AtomicU64::new(0),
            ended: AtomicU64::new(0),
            opened: AtomicU64::new(0),
            changes: AtomicU64::new(0),
            progress: AtomicU64::new(0),
            stall_after: AtomicU64::new(u64::MAX),
            state: Mutex::new(Estimate {
                limit: start as f64,
                long: 0.0,
                short: 0.0,
                windows: 0,
                restore: 0.0,
                history,
            }),
        }
    }

    /// `(min_pool, max_pool)` in force.
    pub(crate) fn bounds(&self) -> (usize, usize) {
        (self.min.load(Relaxed), self.max.load(Relaxed))
    }

    /// Settings changed while running (`live.rs`): the bounds become `min..=max`, and the
    /// limit starts again from `start` when given (a changed `pool`), else stays where the
    /// algorithm had it; either way within the new bounds. The long-term latency is kept.
    pub(crate) fn rebound(
        &self,
        limit: &AtomicUsize,
        start: Option<usize>,
        min: usize,
        max: usize,
    ) {
        let mut est = crate::sync::lock(&self.state);
        self.min.store(min, Relaxed);
        self.max.store(max, Relaxed);
        let from = start.map_or(est.limit, |s| s as f64);
        est.limit = from.clamp(min as f64, max as f64);
        est.restore = 0.0;
        let new = est.limit as usize;
        if limit.swap(new, Relaxed) != new {
            self.changes.fetch_add(1, Relaxed);
            if est.history.len() == HISTORY {
                est.history.pop_front();
            }
            est.history.push_back((self.clock.now(), new));
        }
    }

    /// The start of a call, for its latency (never 0, which means "took no time").
    pub(crate) fn now(&self) -> u64 {
        self.clock.now().max(1)
    }

    /// The pool was empty and a call took a slot: whatever went before it, nothing is stuck.
    #[inline]
    pub(crate) fn emptied(&self) {
        if self.progress.load(Relaxed) != 0 {
            self.progress.store(0, Relaxed);
        }
    }

    /// A timed call starts at `now`, with `in_flight` calls holding slots (itself included).
    ///
    /// The stall guard. Gradient2 learns only from calls that end, so when a dependency stops
    /// answering, every call the limit lets in waits out its timeout before the limit hears of
    /// it: behind a limit of 20, a payment service that went from 20 ms to 8 s took 20 of a
    /// checkout's 20 database connections in 0.4 s and starved its other routes (issue 26's
    /// real run). Calls that keep starting while none has ended for `STALL_LATENCIES` times
    /// the long-term latency (at least `WINDOW_MIN`) are that case: the limit is cut to the
    /// calls in flight (at least `STALL_CALLS`), and given back as windows show the latency
    /// normal again, as after any cut.
    pub(crate) fn started(&self, limit: &AtomicUsize, in_flight: usize, now: u64, name: &str) {
        let last = self.progress.load(Relaxed);
        if last == 0 {
            self.progress.store(now, Relaxed);
            return;
        }
        if now.saturating_sub(last) <= self.stall_after.load(Relaxed)
            || in_flight < STALL_CALLS
            || in_flight >= limit.load(Relaxed)
        {
            return;
        }
        let Ok(mut est) = self.state.try_lock() else {
            return;
        };
        let old = limit.load(Relaxed);
        let (min, max) = self.bounds();
        let new = in_flight.clamp(min, max);
        if new >= old {
            return;
        }
        est.restore = est.restore.max(est.limit);
        est.limit = new as f64;
        limit.store(new, Relaxed);
        let stalled_ms = now.saturating_sub(last) as f64 / 1e6;
        self.changed(est, old, new, now, name, stalled_ms);
    }

    /// Records the call that started at `started` and just gave its slot back, with
    /// `in_flight` calls (itself included) holding slots; closes the window when it is due.
    pub(crate) fn ended(&self, limit: &AtomicUsize, in_flight: usize, started: u64, name: &str) {
        // `started == 0`: the call answered within its first poll, so it took no time and
        // reads no clock (the breaker's measure too).
        let mut now = 0;
        if started != 0 {
            now = self.clock.now();
            self.sum.fetch_add(now.saturating_sub(started), Relaxed);
            self.progress.store(now, Relaxed);
        }
        let n = self.ended.fetch_add(1, Relaxed) + 1;
        // A window needs 10 calls, or as many as a smaller limit lets in flight at once.
        // Checked every `needed` calls, so calls that answer at once read the clock once per
        // `needed` calls rather than each, while a window waits out its 100 ms.
        let needed = WINDOW_CALLS.min(limit.load(Relaxed) as u64).max(1);
        if n < needed || n % needed != 0 {
            return;
        }
        if now == 0 {
            now = self.clock.now();
        }
        if now < self.opened.load(Relaxed).saturating_add(nanos(WINDOW_MIN)) {
            return;
        }
        // One caller closes the window; the others record into the next one.
        let Ok(mut est) = self.state.try_lock() else {
            return;
        };
        if self.ended.load(Relaxed) < needed {
            return; // closed by another caller since we counted
        }
        let n = self.ended.swap(0, Relaxed).max(1);
        let sum = self.sum.swap(0, Relaxed);
        self.opened.store(now, Relaxed);
        let old = limit.load(Relaxed);
        let (min, max) = self.bounds();
        let new = est.window(sum as f64 / n as f64, in_flight, min, max);
        let stall_after = (STALL_LATENCIES * est.long).max(nanos(WINDOW_MIN) as f64);
        self.stall_after.store(stall_after as u64, Relaxed);
        if new == old {
            return;
        }
        limit.store(new, Relaxed);
        self.changed(est, old, new, now, name, 0.0);
    }

    /// Records a change of the limit from `old` to `new` made at `now` (by a window, or by
    /// the stall guard after calls went `stalled_ms` without ending), and logs it.
    fn changed(
        &self,
        mut est: crate::sync::MutexGuard<'_, Estimate>,
        old: usize,
        new: usize,
        now: u64,
        name: &str,
        stalled_ms: f64,
    ) {
        self.changes.fetch_add(1, Relaxed);
        if est.history.len() == HISTORY {
            est.history.pop_front();
        }
        est.history.push_back((now, new));
        let (short_ms, long_ms) = (est.short / 1e6, est.long / 1e6);
        drop(est);
        let min = self.min.load(Relaxed);
        if new == min && old > min {
            tracing::warn!(
                bulkhead = name,
                from = old,
                to = new,
                short_ms,
                long_ms,
                stalled_ms,
                "bulkhead limit collapsed to min_pool: the dependency answers far slower than it used to"
            );
        } else if stalled_ms > 0.0 {
            tracing::debug!(
                bulkhead = name,
                from = old,
                to = new,
                long_ms,
                stalled_ms,
                "bulkhead limit cut to the calls in flight: calls keep starting and none ends"
            );
        } else {
            tracing::debug!(
                bulkhead = name,
                from = old,
                to = new,
                short_ms,
                long_ms,
                "bulkhead limit changed"
            );
        }
    }
}

impl Estimate {
    /// One window's verdict: the new limit from the window's average latency `short` (ns).
    fn window(&mut self, short: f64, in_flight: usize, min: usize, max: usize) -> usize {
        self.windows = self.windows.saturating_add(1);
        self.short = short;
        let weight = if self.windows <= WARMUP {
            1.0 / f64::from(self.windows)
        } else {
            2.0 / (LONG_WINDOWS + 1.0)
        };
        self.long += (short - self.long) * weight;
        // Back to normal after a long slow spell: let the baseline follow quickly (Gradient2).
        if self.long > 2.0 * short {
            self.long *= 0.9;
        }
        let gradient = if short <= 0.0 {
            1.0
        } else {
            (TOLERANCE * self.long / short).clamp(0.5, 1.0)
        };
        // Grow only in a window that shows no queueing: back to where a slow spell found the
        // limit whether or not it is used, beyond that only while half of it is used (an
        // idle pool says nothing about a larger one).
        let next = if gradient < 1.0 {
            self.restore = self.restore.max(self.limit);
            self.limit * gradient
        } else if self.limit < self.restore {
            (self.limit + QUEUE).min(self.restore)
        } else if (in_flight as f64) < self.limit / 2.0 {
            self.limit
        } else {
            self.limit + QUEUE
        };
        self.limit = next.clamp(min as f64, max as f64);
        if gradient >= 1.0 && self.limit >= self.restore {
            self.restore = 0.0;
        }
        self.limit as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_bounds_keep_the_limit_where_the_algorithm_had_it_within_them() {
        let a = Adaptive::new(8, 2, 20);
        let limit = AtomicUsize::new(15);
        crate::sync::lock(&a.state).limit = 15.0;
        a.rebound(&limit, None, 2, 10);
        assert_eq!((limit.load(Relaxed), a.bounds()), (10, (2, 10)));
        a.rebound(&limit, None, 2, 30);
        assert_eq!(
            limit.load(Relaxed),
            10,
            "a higher ceiling does not raise it"
        );
        a.rebound(&limit, Some(4), 2, 30);
        assert_eq!(
            limit.load(Relaxed),
            4,
            "a new start is where it starts again"
        );
        a.rebound(&limit, None, 6, 30);
        assert_eq!(limit.load(Relaxed), 6, "a higher floor lifts it");
        assert_eq!(a.changes.load(Relaxed), 3);
    }

    fn est(limit: f64) -> Estimate {
        Estimate {
            limit,
            long: 0.0,
            short: 0.0,
            windows: 0,
            restore: 0.0,
            history: VecDeque::new(),
        }
    }

    #[test]
    fn a_doubled_latency_cuts_a_quarter_per_window() {
        let mut e = est(100.0);
        for _ in 0..WARMUP {
            assert_eq!(e.window(1e6, 100, 1, 100), 100);
        }
        assert_eq!(e.window(2e6, 100, 1, 100), 75, "100 x 0.75");
        assert_eq!(e.window(2e6, 100, 1, 100), 56);
    }

    #[test]
    fn a_cut_is_given_back_to_an_idle_pool_and_no_more() {
        let mut e = est(40.0);
        for _ in 0..WARMUP {
            e.window(1e6, 1, 1, 200);
        }
        assert_eq!(e.window(4e6, 1, 1, 200), 20, "halved by a slow window");
        assert_eq!(e.window(4e6, 1, 1, 200), 10);
        let back: Vec<usize> = (0..9).map(|_| e.window(1e6, 1, 1, 200)).collect();
        assert_eq!(back, [14, 18, 22, 26, 30, 34, 38, 40, 40]);
    }

    #[test]
    fn an_idle_pool_does_not_grow() {
        let mut e = est(40.0);
        assert_eq!(e.window(1e6, 19, 1, 200), 40);
        assert_eq!(e.window(1e6, 20, 1, 200), 44);
    }
}
