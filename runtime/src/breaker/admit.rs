//! Admission, and judging the closed window: whether a call may go ahead in each state (the
//! closed state one load, the rest on a slow path that also applies what time made due), the
//! refusal it gets otherwise, and the verdict a recorded call's window totals may trip.

use std::time::Duration;

use super::core::Core;
use super::events::Reason;
use crate::error::Rejection;
use crate::settings::BreakerConfig;
use crate::state::{State, Word};
use crate::window::Totals;

/// The result of asking to make a call.
pub(crate) enum Admission {
    /// A normal call, under this generation.
    Normal(u64),
    /// A half-open trial, under this generation.
    Trial(u64),
    /// A ramp call while a dependency back from failures warms (`ramp.rs`): a normal call,
    /// in the window, but under the trial timeout and slow only at the trial bound.
    Warming(u64),
    /// A probe let through while open (`probe_every`), under this generation.
    Probe(u64),
    /// Let through while forced closed without recording: counted, never in the window.
    Unrecorded(u64),
}

impl Core {
    /// The refusal by `state`, counted. Built where it is returned, with only the counting and
    /// the name out of line: a `Rejection` returned from a call is written field by field and
    /// read back whole by the caller, a store-forwarding stall on every move (issue 28: the
    /// open refusal, one thread, 73 -> 59 ns in `profile`).
    #[inline(always)]
    pub(super) fn rejection(&self, state: State, retry_in: Option<Duration>) -> Rejection {
        Rejection::Open {
            name: self.refusal_name(state),
            state,
            retry_in,
        }
    }

    /// Counts a refusal by `state`, and gives the name it carries (returned in registers).
    #[inline(never)]
    fn refusal_name(&self, state: State) -> std::sync::Arc<str> {
        self.counters.refuse(state);
        crate::local_name::for_refusal(&self.code_config().name)
    }

    /// The refusal a call gets at once, before the general path's admission, from a breaker
    /// whose word `w` says plainly open or forced open, when the fast check holds
    /// (`refuse_while_open`, `refuse_while_forced_open`); `None` otherwise, and then
    /// [`admit`](Self::admit) decides. Shared by a call's first poll (`call.rs`) and a keyed
    /// call's (`keyed_call.rs`); inlined into both, so the `Rejection` is built in place.
    #[inline(always)]
    pub(super) fn refuse_at_once(&self, w: Word) -> Option<Rejection> {
        if w.plain(State::Open) {
            self.refuse_while_open()
        } else if w.plain(State::ForcedOpen) {
            self.refuse_while_forced_open()
        } else {
            None
        }
    }

    /// Decides whether a call may go ahead. The closed state is a single load.
    #[inline]
    pub(crate) fn admit(&self) -> Result<Admission, Rejection> {
        let w = self.word();
        // Plain closed only: forced closed takes the slow path, which checks its expiry, and
        // a ramping breaker the path that spreads its share.
        if w.plain_closed() {
            return Ok(Admission::Normal(w.generation()));
        }
        self.admit_slow(w)
    }

    /// The slow path; under live settings, the admission is marked so the caller takes them
    /// (`live.rs`).
    #[cold]
    fn admit_slow(&self, w: Word) -> Result<Admission, Rejection> {
        if !w.live() {
            return self.admit_plain(w);
        }
        self.lapse_live(self.clock().now());
        let w = self.word();
        let a = self.admit_plain(w)?;
        Ok(if w.live() { a.marked_live() } else { a })
    }

    fn admit_plain(&self, mut w: Word) -> Result<Admission, Rejection> {
        if w.state() == State::ForcedOpen && self.forced.held() && self.stuck.alerted() {
            // Held open with no deadline and already reported stuck: nothing left to compare
            // the clock with, so no clock read.
            return Err(self.rejection(State::ForcedOpen, None));
        }
        let now = self.clock().now();
        loop {
            if self.expire_force(w, now) {
                w = self.word();
                continue;
            }
            match w.state() {
                State::Closed if w.ramping() => {
                    if let Some(admission) = self.admit_ramp(w, now) {
                        return admission;
                    }
                    // The ramp was over and the word had moved on: look again.
                }
                State::Closed => return Ok(Admission::Normal(w.generation())),
                State::ForcedClosed => {
                    self.check_stuck(now);
                    if w.unrecorded() {
                        return Ok(Admission::Unrecorded(w.generation()));
                    }
                    return Ok(Admission::Normal(w.generation()));
                }
                State::ForcedOpen => {
                    self.check_stuck(now);
                    let retry = self.force_expires_in(now);
                    return Err(self.rejection(State::ForcedOpen, retry));
                }
                State::Open => {
                    let deadline = self.open.deadline();
                    if now < deadline {
                        if let Some(probe) = self.probe(now) {
                            return Ok(probe);
                        }
                        self.check_stuck(now);
                        let retry = Duration::from_nanos(deadline - now);
                        return Err(self.rejection(State::Open, Some(retry)));
                    }
                    self.transition(Some(w), State::HalfOpen, Reason::OpenElapsed, now);
                }
                State::HalfOpen => {
                    if let Some(admission) = self.admit_half_open(w, now) {
                        return admission;
                    }
                    // A verdict moved the word, or it had already moved: look again.
                }
            }
            w = self.word();
        }
    }

    /// Opens the breaker when the window's totals say so. Called after each recorded call
    /// that could raise a rate (the window returns no totals for one that cannot).
    #[inline]
    pub(crate) fn judge(&self, gen: u64, t: Totals) {
        let c = self.config();
        let reason = match trip_reason(&c, t) {
            Judged::Trips(reason) => reason,
            Judged::Waits(armed) => {
                // A rate at the threshold waits for calls: then a success may trip it too.
                self.with_window(|w| w.arm(armed));
                return;
            }
            Judged::Holds => {
                self.with_window(|w| w.arm(false));
                return;
            }
        };
        self.with_window(|w| w.arm(false));
        let w = self.word();
        if w.state() == State::Closed && w.generation() == gen {
            self.transition(Some(w), State::Open, reason, self.clock().now());
        }
    }
}

/// `part` as a percentage of `whole` (zero of nothing).
pub(crate) fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// What the window's totals say under settings `c` (`Core::judge`, and a snapshot reporting
/// what a change's end will judge).
pub(crate) enum Judged {
    /// Open, for this reason.
    Trips(Reason),
    /// Short of `min_calls`; armed when a rate is already at its threshold.
    Waits(bool),
    /// Enough calls, under every threshold.
    Holds,
}

/// Judges totals `t` under settings `c`.
pub(crate) fn trip_reason(c: &BreakerConfig, t: Totals) -> Judged {
    let failing = t.failures * 100 >= u64::from(c.failure_rate()) * t.calls;
    let slow = c.slow().filter(|r| r.trips(t.slow, t.calls));
    if t.calls < u64::from(c.min_calls()) {
        return Judged::Waits(t.calls > 0 && (failing || slow.is_some()));
    }
    if failing {
        Judged::Trips(Reason::FailureRate {
            rate: pct(t.failures, t.calls),
            threshold: c.failure_rate(),
            calls: t.calls,
        })
    } else if let Some(rule) = slow {
        Judged::Trips(Reason::SlowRate {
            rate: pct(t.slow, t.calls),
            threshold: rule.rate,
            calls: t.calls,
        })
    } else {
        Judged::Holds
    }
}
