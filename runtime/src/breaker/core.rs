//! The shared state machine of one breaker: the state word, admission, judging the closed
//! window, and transitions. Beside it, each an `impl Core` of its own: `trials.rs` (half-open's
//! side), `forced.rs` (operator overrides), `stuck.rs` (the alert), `recovery.rs` (probes and
//! the ramp).
//!
//! Invariants:
//! - `word` holds the state and a generation; every transition bumps the generation, under
//!   `rare`'s lock, so at most one caller performs (and logs) each transition.
//! - `until` is the current state's deadline: the end of the open period while `Open`, the
//!   lapse of a forced state while forced (`NEVER`: held until changed), the ramp's end while
//!   ramping (`recovery.rs`). It is written before `word` turns to that state, so an admitter
//!   that sees the state reads its deadline. (One field for all keeps a breaker within 1 KiB; an admitter holding a stale `Open` word may
//!   read a forced deadline, which at worst refuses that one call while the breaker is forced.)
//! - The closed state never takes the lock: admission is one load, recording is a few
//!   relaxed atomics in the window; only a rate at the threshold takes the lock to trip.
//!   A ramping breaker is `Closed` under a word code of its own, so it takes the slow path
//!   and plain closed stays one compare.

use std::time::Duration;

use super::events::{Events, Reason, Transition};
use super::half_open::Trials;
use super::live::Live;
use super::successes::Successes;
use crate::clock::{nanos, Clock};
use crate::error::Rejection;
use crate::settings::BreakerConfig;
use crate::state::{State, Word};
use crate::sync::atomic::{AtomicU64, Ordering::*};
use crate::sync::{lock, Mutex};
use crate::window::{Totals, Window};

pub(super) const NEVER: u64 = u64::MAX;
/// Set in `unhealthy_since` once the episode's stuck ERROR is logged (virtual nanoseconds
/// never reach bit 63: that is 292 years). One word for both keeps a breaker within 1 KiB.
pub(super) const LOGGED: u64 = 1 << 63;

/// Lifetime counters, never reset (Prometheus counters must only grow). Successes are
/// derived from the window (`successes.rs`), so a healthy call bumps none of these.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) failed: AtomicU64,
    /// Errors excluded by the failure predicate and calls classified ignored.
    pub(crate) ignored: AtomicU64,
    pub(crate) timeouts: AtomicU64,
    pub(crate) panicked: AtomicU64,
    pub(crate) cancelled: AtomicU64,
    /// Refused while `Open`, `ForcedOpen`, or `HalfOpen` and not a trial: one counter per
    /// reason, so the refusal path still bumps exactly one.
    pub(crate) rejected_open: AtomicU64,
    pub(crate) rejected_forced: AtomicU64,
    pub(crate) rejected_half_open: AtomicU64,
    /// Refused while closed and ramping traffic back in (issue 22).
    pub(crate) rejected_ramp: AtomicU64,
    pub(crate) rejected_full: AtomicU64,
    pub(crate) slow: AtomicU64,
    pub(crate) times_opened: AtomicU64,
    pub(crate) conflicts: AtomicU64,
    pub(crate) stale_served: AtomicU64,
}

pub(crate) fn bump(c: &AtomicU64) {
    c.fetch_add(1, Relaxed);
}

/// State only touched on rare paths (transitions, half-open).
pub(super) struct Rare {
    pub(super) trials: Trials,
    /// Openings since the breaker was last healthy: grows the open period under `backoff`.
    /// Kept through a ramp, so a relapse during one backs off as a failed half-open does.
    pub(super) opened_in_a_row: u32,
}

pub(crate) struct Core {
    pub(crate) config: BreakerConfig,
    pub(crate) clock: Clock,
    pub(super) word: AtomicU64,
    pub(super) until: AtomicU64,
    /// While `Open`: when the next probe is due. While ramping: calls that asked, for the
    /// even spread. Unused otherwise (see `recovery.rs`).
    pub(super) aux: AtomicU64,
    state_since: AtomicU64,
    /// When the breaker last left `Closed` for `Open`; `NEVER` while healthy. Spans
    /// open/half-open cycles, so a breaker flapping between them for hours is `stuck`.
    /// The stuck ERROR of this episode was logged when bit [`LOGGED`] is set.
    pub(super) unhealthy_since: AtomicU64,
    pub(crate) window: Window,
    pub(super) rare: Mutex<Rare>,
    pub(crate) counters: Counters,
    pub(crate) successes: Successes,
    pub(super) events: Events,
    /// This breaker's calls in flight already past the slow bound (marked slow in flight):
    /// a full bulkhead whose every slot is one of them refuses for slowness (issue 26).
    pub(crate) slow_in_flight: AtomicU64,
    /// Settings changed while running (issue 29, `live.rs`): read only while the word says so.
    pub(crate) live: Live,
}

/// The result of asking to make a call.
pub(crate) enum Admission {
    /// A normal call, under this generation.
    Normal(u64),
    /// A half-open trial, under this generation.
    Trial(u64),
    /// A probe let through while open (`probe_every`), under this generation.
    Probe(u64),
    /// Let through while forced closed without recording: counted, never in the window.
    Unrecorded(u64),
}

impl Core {
    pub(crate) fn new(config: BreakerConfig, events: Events) -> Core {
        let clock = Clock::new();
        let now = clock.now();
        Core {
            window: Window::new(config.window(), now),
            config,
            clock,
            word: AtomicU64::new(Word::new(State::Closed, 0).0),
            until: AtomicU64::new(0),
            aux: AtomicU64::new(0),
            state_since: AtomicU64::new(now),
            unhealthy_since: AtomicU64::new(NEVER),
            rare: Mutex::new(Rare {
                trials: Trials::new(now),
                opened_in_a_row: 0,
            }),
            counters: Counters::default(),
            successes: Successes::default(),
            events,
            slow_in_flight: AtomicU64::new(0),
            live: Live::new(),
        }
    }

    pub(crate) fn word(&self) -> Word {
        Word(self.word.load(Acquire))
    }

    pub(crate) fn state(&self) -> State {
        self.word().state()
    }

    /// Successful calls over the breaker's life (derived: `successes.rs`).
    pub(crate) fn succeeded(&self) -> u64 {
        self.successes.total(self.recorded())
    }

    pub(crate) fn state_since(&self) -> u64 {
        self.state_since.load(Relaxed)
    }

    pub(super) fn rejection(&self, state: State, retry_in: Option<Duration>) -> Rejection {
        let c = &self.counters;
        bump(match state {
            State::ForcedOpen => &c.rejected_forced,
            State::HalfOpen => &c.rejected_half_open,
            State::Closed => &c.rejected_ramp,
            _ => &c.rejected_open,
        });
        Rejection::Open {
            name: self.config.name.clone(),
            state,
            retry_in,
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
        self.lapse_live(self.clock.now());
        let w = self.word();
        let a = self.admit_plain(w)?;
        Ok(if w.live() { a.marked_live() } else { a })
    }

    fn admit_plain(&self, mut w: Word) -> Result<Admission, Rejection> {
        if w.state() == State::ForcedOpen
            && self.force_until() == NEVER
            && self.unhealthy_since.load(Relaxed) & LOGGED != 0
        {
            // Held open with no deadline and already reported stuck: nothing left to compare
            // the clock with, so no clock read.
            return Err(self.rejection(State::ForcedOpen, None));
        }
        let now = self.clock.now();
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
                    if !self.records_forced() {
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
                    let until = self.until.load(Acquire);
                    if now < until {
                        if let Some(probe) = self.probe(now) {
                            return Ok(probe);
                        }
                        self.check_stuck(now);
                        let retry = Duration::from_nanos(until - now);
                        return Err(self.rejection(State::Open, Some(retry)));
                    }
                    self.transition(Some(w), State::HalfOpen, Reason::OpenElapsed, now);
                }
                State::HalfOpen => {
                    self.check_stuck(now);
                    let mut rare = lock(&self.rare);
                    let cur = self.word();
                    if cur != w {
                        drop(rare);
                        w = cur;
                        continue;
                    }
                    let policy = self.config().half_open();
                    if let Some(v) = rare.trials.verdict(now, self.trial_rule()) {
                        let event = self.apply_verdict(&mut rare, cur, v, now);
                        drop(rare);
                        self.events.emit(event);
                        w = self.word();
                        continue;
                    }
                    if rare.trials.admit(now, policy) {
                        return Ok(Admission::Trial(cur.generation()));
                    }
                    drop(rare);
                    return Err(self.rejection(State::HalfOpen, None));
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
        let failing = t.failures * 100 >= u64::from(c.failure_rate()) * t.calls;
        let slow = c.slow().filter(|r| r.trips(t.slow, t.calls));
        if t.calls < u64::from(c.min_calls()) {
            // A rate at the threshold waits for calls: then a success may trip it too.
            self.with_window(|w| w.arm(t.calls > 0 && (failing || slow.is_some())));
            return;
        }
        self.with_window(|w| w.arm(false));
        let reason = if failing {
            Reason::FailureRate {
                rate: pct(t.failures, t.calls),
                threshold: c.failure_rate(),
                calls: t.calls,
            }
        } else if let Some(rule) = slow {
            Reason::SlowRate {
                rate: pct(t.slow, t.calls),
                threshold: rule.rate,
                calls: t.calls,
            }
        } else {
            return;
        };
        let w = self.word();
        if w.state() == State::Closed && w.generation() == gen {
            self.transition(Some(w), State::Open, reason, self.clock.now());
        }
    }

    /// Moves to `to` if the word is still `expected`'s state and generation (or unconditionally
    /// for `None`).
    pub(crate) fn transition(
        &self,
        expected: Option<Word>,
        to: State,
        reason: Reason,
        now: u64,
    ) -> bool {
        let mut rare = lock(&self.rare);
        let cur = self.word();
        if expected.is_some_and(|e| !e.same_state(cur)) {
            return false;
        }
        let event = self.switch(&mut rare, cur, to, reason, now);
        drop(rare);
        self.events.emit(event);
        true
    }

    /// Performs a transition; the caller holds the lock and emits the returned event after
    /// releasing it.
    pub(super) fn switch(
        &self,
        rare: &mut Rare,
        cur: Word,
        to: State,
        reason: Reason,
        now: u64,
    ) -> Transition {
        // Trials passed and a ramp is set: closed, ramping (`recovery.rs`).
        let ramps = to == State::Closed
            && matches!(reason, Reason::TrialsPassed { .. })
            && self.config().ramp().is_some();
        match to {
            State::Open => {
                let period = self.config().open_period(rare.opened_in_a_row);
                rare.opened_in_a_row = rare.opened_in_a_row.saturating_add(1);
                self.until.store(now.saturating_add(nanos(period)), Release);
                // The first probe waits one `probe_every`: the dependency just failed.
                let probe_every = self.config().probe_every().map_or(0, nanos);
                self.aux.store(now.saturating_add(probe_every), Relaxed);
                bump(&self.counters.times_opened);
                if self.unhealthy_since.load(Relaxed) == NEVER {
                    self.unhealthy_since.store(now, Relaxed);
                }
            }
            State::HalfOpen => rare.trials = Trials::new(now),
            State::Closed => {
                self.with_window(|w| w.reset(now));
                if ramps {
                    self.start_ramp(now);
                } else {
                    rare.opened_in_a_row = 0;
                }
                self.unhealthy_since.store(NEVER, Relaxed);
            }
            // A forced state is an operator's override: held past `alert_after` it is stuck too,
            // counted from the moment it was forced.
            State::ForcedClosed | State::ForcedOpen => {
                self.unhealthy_since.store(now, Relaxed);
            }
        }
        if reason == Reason::Reset {
            rare.opened_in_a_row = 0;
        }
        self.state_since.store(now, Relaxed);
        let next = if ramps {
            cur.next_ramping()
        } else {
            cur.next(to)
        };
        self.word.store(next.0, Release);
        Transition {
            name: self.config.name.clone(),
            from: cur.state(),
            to,
            at: self.clock.instant(now),
            reason,
        }
    }
}

pub(crate) fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}
