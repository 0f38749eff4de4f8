//! What a reader sees of the state without changing it (a metrics snapshot, `Breaker::state`
//! before it applies a due transition): the state a due transition would make, and when it
//! began. A snapshot may be taken on another runtime's clock (a parallel test's, ahead of this
//! breaker's), so it must not apply a transition the breaker's own clock has not reached.

use super::core::Core;
use super::half_open::Verdict;
use crate::state::State;
use crate::sync::lock;

/// What a snapshot reads of the state (`Core::reading_at`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reading {
    /// The state a reader sees (`Core::state_at`).
    pub(crate) state: State,
    /// When it began, or fell due (virtual nanos).
    pub(crate) since: u64,
    /// It is an opening that is due but not applied yet (a half-open's reopening, or the
    /// code's settings back from a lapsed change and tripping): one more than counted.
    pub(crate) reopened: bool,
}

impl Core {
    /// The state a reader at `now` should see, changing nothing: a forced state past its
    /// expiry reads as what it lapses into, an open period that ended as half-open, a
    /// half-open whose verdict is due as that verdict.
    /// What a metrics snapshot reports: taken on another runtime's clock (a parallel test's,
    /// ahead of this breaker's), it must not apply a transition the breaker's own clock has
    /// not reached. The breaker's next call, or `Breaker::state`, applies it.
    pub(crate) fn state_at(&self, now: u64) -> State {
        let w = self.word();
        if let Some(to) = self.force_lapsed(w, now) {
            return to;
        }
        if w.state() == State::Open && now >= self.open.deadline() {
            return State::HalfOpen;
        }
        if w.state() == State::HalfOpen {
            return match self.verdict_due(&lock(&self.rare), w, now) {
                Some(Verdict::Close) => State::Closed,
                Some(Verdict::Reopen) => State::Open,
                None => self.state(),
            };
        }
        w.state()
    }

    /// [`state_at`](Self::state_at) with when that state began, for a snapshot: a transition
    /// that is due but not applied yet is dated when it fell due (a forced state's expiry, an
    /// open period's end, a half-open's window or bound), not at the last applied one, and a
    /// due reopening counts as an opening; so the snapshot's time in state and count of
    /// openings agree with the state it reports. Changes nothing.
    pub(crate) fn reading_at(&self, now: u64) -> Reading {
        let w = self.word();
        let since = self.state_since();
        let state = self.state_at(now);
        if state == w.state() {
            return Reading {
                state,
                since,
                reopened: false,
            };
        }
        let due = match w.state() {
            State::ForcedOpen | State::ForcedClosed => self.forced.expires(),
            State::Open => self.open.deadline(),
            State::HalfOpen => since.saturating_add(self.trial_rule().judged_after()),
            _ => now,
        };
        Reading {
            state,
            since: dated(due, since, now),
            reopened: state == State::Open && w.state() == State::HalfOpen,
        }
    }
}

/// When a due transition is dated for a reader at `now`: `due`, kept between the state's start
/// `since` and `now`. Not `clamp`: a transition on another thread after the reader's `now` (or
/// on a clock ahead of it) leaves `since` past `now`, and `clamp` panics when its bounds cross;
/// then the state began "now" for this reader (`since`: zero time in it).
pub(crate) fn dated(due: u64, since: u64, now: u64) -> u64 {
    due.max(since).min(now.max(since))
}
