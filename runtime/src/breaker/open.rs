//! The open state: its period, and the probes let through while it lasts (issue 22).
//!
//! Invariants:
//! - [`Open`]'s fields are written as the breaker opens, under the lock and before the word
//!   turns to `Open`: an admitter that sees `Open` reads this period's deadline. One holding a
//!   stale `Open` word after the breaker left it reads the last period's figures: at worst it
//!   is refused once, or wins a probe it is then denied (the word is read again after the swap).
//! - The first probe waits one `probe_every` (the dependency has just failed); one caller per
//!   interval wins a compare-and-swap on `next_probe`, so probes never bunch.
//! - A probe passes only if it answered, did not fail and was not slow by the trial bound, so
//!   a dependency that is slow but under its timeout never gets half-open early. A probe that
//!   fails, times out or is cancelled changes nothing: the open period is never extended by
//!   it, and a cancelled one does not free the next probe early (callers that give up must
//!   not raise the probe rate). One that never reached the dependency (ignored, or refused
//!   by a full bulkhead) is given back: the next caller probes (`give_back_probe`).

use std::time::Duration;

use super::core::{Admission, Core};
use super::events::Reason;
use super::half_open::{Episode, TrialEnd, TrialResult};
use crate::clock::coarse::{self, Span};
use crate::clock::nanos;
use crate::error::Rejection;
use crate::state::State;
use crate::sync::atomic::{AtomicU64, Ordering::*};
use crate::sync::lock;
use fusebox_settings::defaults::PROBE_BACKOFF_SHARE;

/// The current (or last) open period. Read lock-free by every admission while open.
#[derive(Default)]
pub(crate) struct Open {
    /// When the period ends (virtual nanos): the first admission after it goes half-open.
    deadline: AtomicU64,
    /// When the next probe is due (virtual nanos); unused without `probe_every`.
    next_probe: AtomicU64,
}

impl Open {
    /// When the open period ends.
    #[inline]
    pub(super) fn deadline(&self) -> u64 {
        self.deadline.load(Acquire)
    }
}

impl Core {
    /// Time left at `now` of the current open period (zero once it ended).
    pub(crate) fn open_left(&self, now: u64) -> Duration {
        Duration::from_nanos(self.open.deadline().saturating_sub(now))
    }

    /// How long ago, at `now`, the current (or last) open period ended; zero while it lasts.
    pub(crate) fn open_over_for(&self, now: u64) -> u64 {
        now.saturating_sub(self.open.deadline())
    }

    /// Starts an open period of `period` at `now`; under the lock, before the word turns.
    pub(super) fn enter_open(&self, period: Duration, now: u64) {
        self.open
            .deadline
            .store(now.saturating_add(nanos(period)), Release);
        // The first probe waits one `probe_every`: the dependency just failed.
        let probe_every = self.config().probe_every().map_or(0, nanos);
        self.open
            .next_probe
            .store(now.saturating_add(probe_every), Relaxed);
    }

    /// The open refusal, the common case written out for `call.rs`: the word was plain `Open`
    /// (no live settings), the period has not ended and no probe is due. `None`: anything else,
    /// which the general path (`admit`) decides. A coarse clock read when it settles that
    /// (`clock/coarse.rs`), else an exact one; the refusal counter; the name's clone: nothing
    /// else that the general path would do for it is skipped (the stuck check runs, on the
    /// exact clock, once the episode is old enough to be stuck). Inlined into the call's
    /// `poll`, so its `Rejection` is built in place (see `rejection`).
    #[inline(always)]
    pub(crate) fn refuse_while_open(&self) -> Option<Rejection> {
        if let Some(at) = coarse::now() {
            if let Some(refused) = self.refuse_within(at) {
                return Some(refused);
            }
        }
        self.refuse_within(Span::exact(self.clock().now()))
    }

    /// The refusal, if the period surely lasts through all of `at` and no probe is due in it;
    /// on a coarse reading, `None` also once the stuck alert may be due (the exact clock
    /// checks it). `retry_in` counts from `at`'s earliest instant, and never exceeds the
    /// period: at most a coarse margin more than an exact read would say.
    #[inline(always)]
    fn refuse_within(&self, at: Span) -> Option<Rejection> {
        let deadline = self.open.deadline();
        if at.latest >= deadline {
            return None;
        }
        let settings = self.code_config().settings();
        if settings.probe_every().is_some() && at.latest >= self.open.next_probe.load(Relaxed) {
            return None;
        }
        if self.stuck.unhealthy_nanos(at.latest) >= Some(nanos(settings.alert_after())) {
            if !at.is_exact() {
                return None;
            }
            self.check_stuck(at.latest);
        }
        let mut left = deadline - at.earliest;
        if !at.is_exact() {
            // A coarse reading may begin before the period did: never more than the period.
            // Not on an exact read: a period opened on another runtime's clock (a parallel
            // test's, ahead) began after the caller's now, and the caller waits all it has left.
            // A period begun since `deadline` was read is no bound (`None`).
            let period = deadline.checked_sub(self.state_since()).filter(|p| *p > 0);
            left = period.map_or(left, |p| left.min(p));
        }
        Some(self.rejection(State::Open, Some(Duration::from_nanos(left))))
    }

    /// Whether every call is surely refused from now until `at` (virtual nanos): forced open
    /// past it, or open with the period and the next probe (if probing) both after it. A
    /// retry asks before it waits (`Retry::resume`): one that could only be refused is not
    /// made, so it neither spends the budget nor keeps its caller for the backoff.
    pub(crate) fn refuses_through(&self, at: u64) -> bool {
        match self.word().state() {
            State::ForcedOpen => self.forced.expires() > at,
            State::Open => {
                let probing = self.config().probe_every().is_some();
                self.open.deadline() > at && !(probing && self.open.next_probe.load(Relaxed) <= at)
            }
            _ => false,
        }
    }

    /// While open, before the period ends: a probe, if `probe_every` is set and one is due.
    pub(super) fn probe(&self, now: u64) -> Option<Admission> {
        let every = nanos(self.config().probe_every()?);
        let due = self.open.next_probe.load(Relaxed);
        if now < due {
            return None;
        }
        // One caller per interval wins the swap; the others are refused as before.
        self.open
            .next_probe
            .compare_exchange(due, now.saturating_add(every), Relaxed, Relaxed)
            .ok()?;
        // Read again: a caller holding a stale word probes for the period that is open now.
        let cur = self.word();
        (cur.state() == State::Open).then(|| Admission::Probe(cur.generation()))
    }

    /// A probe that did not reach the dependency (ignored, or refused by a full bulkhead)
    /// tells nothing: the next caller may probe at once, as a half-open trial's slot goes to
    /// the next caller. Only while the period that admitted it lasts (checked under the lock,
    /// which every new open period is entered under). A cancelled probe is not given back.
    pub(crate) fn give_back_probe(&self, gen: u64) {
        let now = self.clock().now();
        let _rare = lock(&self.rare);
        let cur = self.word();
        if cur.generation() == gen && cur.state() == State::Open {
            self.open.next_probe.fetch_min(now, Relaxed);
        }
    }

    /// A probe ended. Passed: half-open starts now with the probe as its first passed trial
    /// (closed at once if that is all half-open asks for). Anything else leaves the breaker
    /// open until its period ends.
    pub(crate) fn finish_probe(&self, gen: u64, end: TrialEnd) {
        let passed = TrialResult {
            failed: false,
            slow: false,
        };
        if end != TrialEnd::Judged(passed) {
            self.back_off_probes(end);
            return;
        }
        let now = self.clock().now();
        let mut rare = lock(&self.rare);
        let cur = self.word();
        if cur.generation() != gen || cur.state() != State::Open {
            return;
        }
        let half_open =
            self.transition_locked(&mut rare, cur, State::HalfOpen, Reason::ProbePassed, now);
        rare.episode = Episode::probed();
        let verdict = rare.episode.verdict(0, self.trial_rule());
        let closed = verdict.map(|v| self.apply_verdict(&mut rare, self.word(), v, now));
        drop(rare);
        self.events.emit(half_open);
        if let Some(t) = closed {
            self.events.emit(t);
        }
    }

    /// A derived probe that held its caller (slow, timed out, or late when abandoned) pushes
    /// the next one to an eighth of the time away from closed, at most the open period cap:
    /// a dependency that hangs is probed ever more rarely, one that refuses at once (free)
    /// keeps the plain pace (`defaults::PROBE_BACKOFF_SHARE`).
    fn back_off_probes(&self, end: TrialEnd) {
        let held = match end {
            TrialEnd::Judged(r) => r.slow,
            TrialEnd::Abandoned(_) => true,
            TrialEnd::Released => false,
        };
        let config = self.config();
        let settings = config.settings();
        if !held || !settings.probe_backs_off() {
            return;
        }
        let now = self.clock().now();
        let away = self.stuck.unhealthy_nanos(now).unwrap_or(0);
        let cap = nanos(settings.open_for_max());
        let wait = (away / u64::from(PROBE_BACKOFF_SHARE)).min(cap);
        self.open
            .next_probe
            .fetch_max(now.saturating_add(wait), Relaxed);
    }
}
