//! The stuck alert: a breaker away from closed (or held forced) longer than `alert_after` logs
//! one ERROR per episode and shows `stuck` in every metrics output.
//!
//! Invariants:
//! - An episode begins when the breaker leaves `Closed` for `Open` (kept through open and
//!   half-open cycles, so a breaker flapping between them for hours is stuck) or is forced
//!   (counted from the moment it was forced), and ends when it closes. Only transitions, under
//!   the lock, write [`Stuck::since`].
//! - [`Stuck::alerted`] names the episode whose ERROR was logged by its start: an episode is
//!   logged once, and a new one (which starts later, since the last one had to last
//!   `alert_after` to be logged) is logged again without anything to clear.

use std::time::Duration;

use super::core::{Core, NEVER};
use crate::clock::{nanos, Clock};
use crate::state::State;
use crate::sync::atomic::{AtomicU64, Ordering::*};

/// The current episode away from closed.
pub(crate) struct Stuck {
    /// When the episode began (virtual nanos); [`NEVER`] while healthy.
    since: AtomicU64,
    /// The `since` of the last episode whose ERROR was logged; [`NEVER`] before any.
    alerted: AtomicU64,
}

impl Default for Stuck {
    fn default() -> Stuck {
        Stuck {
            since: AtomicU64::new(NEVER),
            alerted: AtomicU64::new(NEVER),
        }
    }
}

impl Stuck {
    /// An episode begins now (the breaker was forced).
    pub(super) fn begin(&self, now: u64) {
        self.since.store(now, Relaxed);
    }

    /// The breaker opened: an episode begins now unless one is under way.
    pub(super) fn begin_unless_unhealthy(&self, now: u64) {
        if self.since.load(Relaxed) == NEVER {
            self.begin(now);
        }
    }

    /// The breaker closed: healthy again.
    pub(super) fn end(&self) {
        self.since.store(NEVER, Relaxed);
    }

    /// Virtual nanos since the episode began, if the breaker is in one.
    #[inline]
    pub(super) fn unhealthy_nanos(&self, now: u64) -> Option<u64> {
        let since = self.since.load(Relaxed);
        (since != NEVER).then(|| now.saturating_sub(since))
    }

    /// The current episode's ERROR was logged.
    pub(super) fn alerted(&self) -> bool {
        let since = self.since.load(Relaxed);
        since != NEVER && self.alerted.load(Relaxed) == since
    }
}

/// A number of this thread's own, from 1 (0: none), for `Rare::moved_on`. Std atomics: one
/// process-wide counter, not part of any breaker's state. Past 65 534 threads numbers are
/// reused: two threads sharing one can each log the other's alert from a snapshot, as
/// before there were marks.
pub(super) fn this_thread() -> u16 {
    use std::sync::atomic::{AtomicU32 as StdU32, Ordering::Relaxed as R};
    static NEXT: StdU32 = StdU32::new(0);
    thread_local! {
        static MARK: u16 = (NEXT.fetch_add(1, R) % u32::from(FIRST_USED - 1)) as u16 + 1;
    }
    MARK.with(|m| *m)
}

/// `Rare::moved_on` of a breaker used (`Core::first_used`) and never moved: no thread's mark.
pub(super) const FIRST_USED: u16 = u16::MAX;

impl Core {
    /// What a metrics snapshot reports as `stuck`, at a reader's `now`: away from closed
    /// longer than `alert_after`. It logs the episode's one ERROR too (a breaker no call
    /// reaches is stuck all the same, and a scrape is then what tells) only where the reader
    /// shares the breaker's clock: on the real clock, or on the thread that made its last
    /// transition (a paused test reading its own breaker). A parallel test's snapshot on a
    /// paused clock of its own, ahead of this breaker's, sees it stuck long before its own
    /// clock does: it must not take the episode's ERROR from the test whose breaker it is
    /// (logged to that reader's subscriber, with a wrong `unhealthy_for`).
    pub(crate) fn stuck_seen(&self, now: u64) -> bool {
        if self.stuck_since(now).is_none() {
            return false;
        }
        if !self.stuck.alerted() && self.reader_shares_clock() {
            self.check_stuck(now);
        }
        true
    }

    /// When the current episode began, if it has lasted `alert_after` at `now`. Every refusal
    /// asks: raw nanoseconds, durations built only when stuck.
    fn stuck_since(&self, now: u64) -> Option<u64> {
        let since = self.stuck.since.load(Relaxed);
        let stuck =
            since != NEVER && now.saturating_sub(since) >= nanos(self.config().alert_after());
        stuck.then_some(since)
    }

    fn reader_shares_clock(&self) -> bool {
        crate::sync::lock(&self.rare).moved_on == this_thread() || !Clock::reads_virtual_time()
    }

    /// After an opening on slowness, the learned usual latency and the bound it sets, when that
    /// bound is shorter than the rule's own: what holds the breaker open (`usual.rs`).
    fn held_by_usual_latency(&self) -> Option<(Duration, Duration)> {
        let c = self.config();
        let rule = c.slow()?.bound;
        let usual = self.usual_latency()?;
        let bound = self.slow_bound(&c)?;
        (self.slow_episode() && bound < rule).then_some((usual, bound))
    }

    /// True when away from closed longer than `alert_after`; logs at ERROR once per episode.
    pub(crate) fn check_stuck(&self, now: u64) -> bool {
        let Some(since) = self.stuck_since(now) else {
            return false;
        };
        let alert_after = self.config().alert_after();
        let alerted = &self.stuck.alerted;
        // A shadow's core (`shadow.rs`) is not the live breaker: its episodes log nothing.
        if alerted.load(Relaxed) != since
            && alerted.swap(since, Relaxed) != since
            && self.events.is_live()
        {
            let for_ = Duration::from_nanos(now.saturating_sub(since));
            let (state, name) = (self.state(), &self.config().name);
            if matches!(state, State::ForcedOpen | State::ForcedClosed) {
                tracing::error!(
                    breaker = %name,
                    %state,
                    forced_for = ?for_,
                    alert_after = ?alert_after,
                    "circuit breaker stuck: held in a forced state longer than alert_after"
                );
            } else if let Some((usual, bound)) = self.held_by_usual_latency() {
                // Held open by what it learned: if that latency is the new normal, only an
                // operator can say so, and the message says how.
                tracing::error!(
                    breaker = %name,
                    %state,
                    unhealthy_for = ?for_,
                    alert_after = ?alert_after,
                    usual_latency = ?usual,
                    slow_bound = ?bound,
                    "circuit breaker stuck: away from closed longer than alert_after, its answers still slower than five times the usual latency it learned; if that is the new normal, reset() forgets it, or give the breaker a slow rule"
                );
            } else {
                tracing::error!(
                    breaker = %name,
                    %state,
                    unhealthy_for = ?for_,
                    alert_after = ?alert_after,
                    "circuit breaker stuck: away from closed longer than alert_after"
                );
            }
        }
        true
    }
}
