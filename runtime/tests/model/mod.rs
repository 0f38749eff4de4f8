//! A plain reference model of the breaker's specified semantics (ARCHITECTURE.md,
//! "Invariants"), for property tests.
//!
//! Written from the spec, not from the implementation: a `VecDeque` of calls for the window
//! (the last N, or those of the last ten slots of a tenth of the window each), whole
//! milliseconds for time, and one function per rule. Calls run one at a time; "held" calls are
//! admitted, never polled again, and later dropped (cancelled).
//!
//! Here: the settings, the calls, state changes, admission and one call's end; `window.rs`:
//! the window and its verdict; `recovery.rs`: trials, probes and the ramp.
#![allow(dead_code)]

mod recovery;
mod window;

use std::collections::VecDeque;
use std::time::Duration;

use fusebox_runtime::State;

/// The settings the model understands.
#[derive(Debug, Clone)]
pub struct Config {
    /// Count window size, used when `time_window` is `None`.
    pub window: usize,
    /// Time window in ms: ten slots of a tenth each, a slot leaves when ten newer ones began.
    pub time_window: Option<u64>,
    pub min_calls: usize,
    pub failure_rate: u64,
    /// `(bound_ms, rate, strict)`: strict is `trip_pNN` (more than), else `slow` (at least).
    pub slow: Option<(u64, u64, bool)>,
    pub timeout: Option<u64>,
    pub half_open_timeout: Option<u64>,
    pub open_for: u64,
    /// Open periods double up to this cap.
    pub backoff_max: Option<u64>,
    pub half_open: HalfOpen,
    /// While open, one call per this many ms goes through as a probe (issue 22).
    pub probe_every: Option<u64>,
    /// After trials pass, the admitted share grows to all calls over this many ms (issue 22).
    pub ramp: Option<u64>,
}

#[derive(Debug, Clone, Copy)]
pub enum HalfOpen {
    Calls(u32),
    Share { pct: u64, window: u64 },
}

/// How the dependency answers one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Ok,
    /// An error the failure predicate counts.
    Fail,
    /// An error the failure predicate does not count.
    Ignored,
    Panic,
}

/// What the caller sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    Rejected,
    Ok,
    Failed,
    Ignored,
    TimedOut,
    Panicked,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub succeeded: u64,
    pub failed: u64,
    pub ignored: u64,
    pub timed_out: u64,
    pub panicked: u64,
    pub cancelled: u64,
    pub rejected: u64,
    pub slow: u64,
    pub times_opened: u64,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    failed: bool,
    slow: bool,
    /// Slot number (time windows only).
    slot: u64,
}

#[derive(Debug, Clone, Default)]
struct Trials {
    started: u64,
    asked: u64,
    in_flight: u32,
    granted: u32,
    ok: u32,
    failed: u32,
    slow: u32,
    /// In flight past the slow bound: judged as slow answers until they end.
    marked: u32,
    /// When the last trial was admitted (ms into the episode): every trial in flight is past
    /// the slow bound once the bound has passed since.
    last_admit: u64,
    /// With a share: trials freed without a verdict (cancelled early), each an admission
    /// owed to the next caller.
    owed: u32,
}

/// An admitted call: under which generation, and whether it is a trial.
#[derive(Debug, Clone, Copy)]
pub struct Ticket {
    gen: u64,
    pub trial: bool,
    /// A probe while open: run as a trial, judged on its own.
    probe: bool,
    /// When it was admitted.
    start: u64,
}

#[derive(Debug)]
pub struct Model {
    pub cfg: Config,
    pub now: u64,
    pub state: State,
    gen: u64,
    window: VecDeque<Entry>,
    /// Newest slot the time window has seen.
    head: u64,
    /// When the time window's first call was recorded: its slots count from there.
    origin: Option<u64>,
    open_until: u64,
    opened_in_a_row: u32,
    trials: Trials,
    /// While open: when the next probe is due.
    next_probe: u64,
    /// While closed and ramping: when the ramp ends, and the shares of the callers that
    /// asked so far, summed in 1/65536ths of a call.
    ramp_until: Option<u64>,
    ramp_credit: u64,
    pub counters: Counters,
}

impl Model {
    pub fn new(cfg: Config) -> Model {
        Model {
            cfg,
            now: 0,
            state: State::Closed,
            gen: 0,
            window: VecDeque::new(),
            head: 0,
            origin: None,
            open_until: 0,
            opened_in_a_row: 0,
            trials: Trials::default(),
            next_probe: 0,
            ramp_until: None,
            ramp_credit: 0,
            counters: Counters::default(),
        }
    }

    fn open_period(&self) -> u64 {
        match self.cfg.backoff_max {
            None => self.cfg.open_for,
            Some(max) => {
                let grown = Duration::from_millis(self.cfg.open_for).as_secs_f64()
                    * 2f64.powi(self.opened_in_a_row.min(64) as i32);
                let max_d = Duration::from_millis(max);
                let d = if grown < max_d.as_secs_f64() {
                    Duration::from_secs_f64(grown)
                } else {
                    max_d
                };
                d.as_millis() as u64
            }
        }
    }

    fn go(&mut self, to: State) {
        self.ramp_until = None;
        match to {
            State::Open => {
                self.open_until = self.now + self.open_period();
                // The first probe waits one interval: the dependency has just failed.
                self.next_probe = self.now + self.cfg.probe_every.unwrap_or(0);
                self.opened_in_a_row += 1;
                self.counters.times_opened += 1;
            }
            State::HalfOpen => {
                self.trials = Trials {
                    started: self.now,
                    ..Trials::default()
                }
            }
            State::Closed => {
                self.roll();
                self.window.clear();
                self.opened_in_a_row = 0;
            }
            State::ForcedOpen | State::ForcedClosed => {}
        }
        self.state = to;
        self.gen += 1;
    }

    pub fn force_open(&mut self) {
        self.go(State::ForcedOpen);
    }

    pub fn force_close(&mut self) {
        self.go(State::ForcedClosed);
    }

    pub fn reset(&mut self) {
        self.go(State::Closed);
    }

    /// Admission at `now`.
    pub fn admit(&mut self) -> Option<Ticket> {
        loop {
            let state = self.state;
            match state {
                State::Closed if !self.ramp_admitted() => break,
                State::Closed | State::ForcedClosed => {
                    return Some(Ticket {
                        gen: self.gen,
                        trial: false,
                        probe: false,
                        start: self.now,
                    })
                }
                State::ForcedOpen => break,
                State::Open if self.now < self.open_until => {
                    let Some(every) = self.cfg.probe_every else {
                        break;
                    };
                    if self.now < self.next_probe {
                        break;
                    }
                    self.next_probe = self.now + every;
                    return Some(Ticket {
                        gen: self.gen,
                        trial: true,
                        probe: true,
                        start: self.now,
                    });
                }
                State::Open => self.go(State::HalfOpen),
                State::HalfOpen => {
                    if self.verdict().is_some() {
                        self.judge_trials();
                        continue;
                    }
                    if self.trial_admitted() {
                        return Some(Ticket {
                            gen: self.gen,
                            trial: true,
                            probe: false,
                            start: self.now,
                        });
                    }
                    break;
                }
            }
        }
        self.counters.rejected += 1;
        None
    }

    fn current(&self, t: Ticket) -> bool {
        t.gen == self.gen && matches!(self.state, State::Closed | State::ForcedClosed)
    }

    /// Whether a call that ran `ran` ms is slow: at the bound too, except under a percentile
    /// rule (`strict`: p95 > bound), where only past it.
    fn slow_by_rule(&self, ran: u64) -> bool {
        self.cfg
            .slow
            .is_some_and(|(b, _, strict)| ran > b || (!strict && ran == b))
    }

    /// One call that the dependency answers with `answer` after `latency` ms, start to end.
    pub fn call(&mut self, answer: Answer, latency: u64) -> Seen {
        let Some(t) = self.admit() else {
            return Seen::Rejected;
        };
        let start = self.now;
        let timeout = if t.trial {
            Some(self.trial_timeout())
        } else {
            self.cfg.timeout
        };
        let timed_out = timeout.is_some_and(|to| latency > to);
        let ran = if timed_out { timeout.unwrap() } else { latency };
        let seen = match (timed_out, answer) {
            (true, _) => Seen::TimedOut,
            (_, Answer::Ok) => Seen::Ok,
            (_, Answer::Fail) => Seen::Failed,
            (_, Answer::Ignored) => Seen::Ignored,
            (_, Answer::Panic) => Seen::Panicked,
        };
        let failed = matches!(seen, Seen::Failed | Seen::TimedOut | Seen::Panicked);
        let c = &mut self.counters;
        match seen {
            Seen::Ok => c.succeeded += 1,
            Seen::Failed => c.failed += 1,
            // An error the predicate does not count is a success, in the counters too (the
            // ignored outcome, `ignored`'s own, is not modelled here).
            Seen::Ignored => c.succeeded += 1,
            Seen::TimedOut => c.timed_out += 1,
            Seen::Panicked => c.panicked += 1,
            Seen::Rejected => unreachable!(),
        }
        // The slow bound is watched only when it comes before the timeout.
        let bound = self
            .cfg
            .slow
            .map(|(b, _, _)| b)
            .filter(|b| timeout.is_none_or(|to| *b < to));
        if t.trial {
            // Trials run to completion under their own timeout and are judged by the whole
            // rule (slow at the slow bound: no `half_open_slow` in the model); one still
            // running past the bound counts as a slow answer from then, judged at once, as a
            // closed call does. A probe has no episode: judged when it ends.
            let marked = !t.probe && bound.is_some_and(|b| ran > b);
            if marked {
                self.now = start + bound.unwrap();
                self.counters.slow += 1;
                self.mark_trial(t);
            }
            self.now = start + ran;
            let slow = timed_out || marked || self.slow_by_rule(ran);
            if slow && !marked {
                self.counters.slow += 1;
            }
            self.end_trial(t, Some((failed, slow)), marked);
            return seen;
        }
        // Still running past the bound: slow now, judged now (a hung call trips early).
        let marked = bound.is_some_and(|b| ran > b);
        let mut mark_slot = None;
        if marked {
            self.now = start + bound.unwrap();
            self.counters.slow += 1;
            if self.current(t) {
                self.push(false, true);
                mark_slot = self.window.back().map(|e| e.slot);
                self.judge(t.gen);
            }
        }
        self.now = start + ran;
        let slow = timed_out || self.slow_by_rule(ran);
        if slow && !marked {
            self.counters.slow += 1;
        }
        if !self.current(t) {
            return seen;
        }
        // Still current, so the mark's entry, if the window still holds it (a time window
        // may have aged it out while the call ran), is the window's last: it gets the failure.
        self.roll();
        let held = marked && mark_slot.is_some() && self.window.back().map(|e| e.slot) == mark_slot;
        if held {
            self.window.back_mut().unwrap().failed = failed;
            if failed {
                self.judge(t.gen);
            }
        } else {
            self.push(failed, slow);
            self.judge(t.gen);
        }
        seen
    }

    /// A call admitted and then dropped before it finished.
    pub fn cancel(&mut self, t: Ticket) {
        self.counters.cancelled += 1;
        if t.trial {
            // A trial dropped when already late is judged as one that answered that late:
            // past its timeout failed and slow, past the slow bound slow; dropped earlier it
            // only frees its slot.
            let ran = self.now - t.start;
            let late = if ran >= self.trial_timeout() {
                Some((true, true))
            } else if self.slow_by_rule(ran) {
                Some((false, true))
            } else {
                None
            };
            if late.is_some() {
                self.counters.slow += 1;
            }
            self.end_trial(t, late, false);
        }
    }

    pub fn advance(&mut self, ms: u64) {
        self.now += ms;
        self.read();
    }

    /// What `Breaker::state` applies when read (the harness reads it after each op): an open
    /// period that ended goes half-open, and a verdict that time alone made due (a trial in
    /// flight aging past the bound, a share's window over) is judged.
    pub fn read(&mut self) {
        if self.state == State::Open && self.now >= self.open_until {
            self.go(State::HalfOpen);
        }
        if self.state == State::HalfOpen {
            self.judge_trials();
        }
    }
}
