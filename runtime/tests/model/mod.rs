//! A plain reference model of the breaker's specified semantics (ARCHITECTURE.md,
//! "Invariants"), for property tests.
//!
//! Written from the spec, not from the implementation: a `VecDeque` of calls for the window
//! (the last N, or those of the last ten slots of a tenth of the window each), whole
//! milliseconds for time, and one function per rule. Calls run one at a time; "held" calls are
//! admitted, never polled again, and later dropped (cancelled).
#![allow(dead_code)]

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
            open_until: 0,
            opened_in_a_row: 0,
            trials: Trials::default(),
            next_probe: 0,
            ramp_until: None,
            ramp_credit: 0,
            counters: Counters::default(),
        }
    }

    pub fn window_calls(&mut self) -> u64 {
        self.roll();
        self.window.len() as u64
    }

    /// Time windows: moves to the current slot and forgets calls ten slots old.
    fn roll(&mut self) {
        let Some(w) = self.cfg.time_window else {
            return;
        };
        let slot_ns = (w * 1_000_000 / 10).max(1);
        self.head = self.head.max(self.now * 1_000_000 / slot_ns);
        let head = self.head;
        self.window.retain(|e| e.slot + 10 > head);
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

    /// The trials' verdict, if due: `Some(true)` closes, `Some(false)` reopens.
    fn verdict(&self) -> Option<bool> {
        let t = &self.trials;
        match self.cfg.half_open {
            HalfOpen::Calls(_) if t.failed > 0 || t.slow > 0 => Some(false),
            HalfOpen::Calls(n) if t.ok >= n => Some(true),
            HalfOpen::Calls(_) => None,
            HalfOpen::Share { window, .. } => {
                let done = u64::from(t.ok + t.failed);
                if self.now - t.started < window || done == 0 {
                    None
                } else {
                    let slow = u64::from(t.slow);
                    let by_slow = self.cfg.slow.is_some_and(|(_, rate, strict)| {
                        if strict {
                            slow * 100 > rate * done
                        } else {
                            slow * 100 >= rate * done
                        }
                    });
                    Some(u64::from(t.failed) * 100 < self.cfg.failure_rate * done && !by_slow)
                }
            }
        }
    }

    fn judge_trials(&mut self) {
        match self.verdict() {
            Some(true) => self.close_on_trials(),
            Some(false) => self.go(State::Open),
            None => {}
        }
    }

    /// Trials passed: closed, and with a ramp, ramping (the open period's growth is kept
    /// until the ramp is done, so a relapse backs off as a failed half-open would).
    fn close_on_trials(&mut self) {
        let kept = self.opened_in_a_row;
        self.go(State::Closed);
        if let Some(ramp) = self.cfg.ramp {
            self.opened_in_a_row = kept;
            self.ramp_until = Some(self.now + ramp);
            self.ramp_credit = 0;
        }
    }

    /// The ramp's share at `now`: linear from the half-open share (5 % under a count of
    /// trials) to all; `None` once the ramp is over.
    fn ramp_share(&self) -> Option<f64> {
        let (until, ramp) = (self.ramp_until?, self.cfg.ramp?);
        if self.now >= until {
            return None;
        }
        let left = ((until - self.now) as f64 / ramp as f64).min(1.0);
        let start = match self.cfg.half_open {
            HalfOpen::Share { pct, .. } => pct as f64 / 100.0,
            HalfOpen::Calls(_) => 0.05,
        };
        Some(start + (1.0 - start) * (1.0 - left))
    }

    /// Whether the next closed caller is let in by the ramp (always once it is over).
    fn ramp_admitted(&mut self) -> bool {
        if self.ramp_until.is_none() {
            return true;
        }
        let Some(share) = self.ramp_share() else {
            // Over: found by the first caller after its end, which forgets the growth.
            self.ramp_until = None;
            self.opened_in_a_row = 0;
            return true;
        };
        // Spread evenly in 1/65536ths, the first admitted: each caller adds its share to
        // the sum and goes in when the sum's ceiling grows (a whole call ends in its stretch).
        let s = ((share * 65536.0) as u64).min(65536);
        let before = self.ramp_credit;
        self.ramp_credit += s;
        (before + s).div_ceil(65536) > before.div_ceil(65536)
    }

    /// Whether the next half-open caller becomes a trial.
    fn trial_admitted(&mut self) -> bool {
        let t = &mut self.trials;
        let yes = match self.cfg.half_open {
            HalfOpen::Calls(n) => t.granted < n,
            HalfOpen::Share { window, .. }
                if t.ok + t.failed == 0 && t.in_flight == 0 && self.now - t.started >= window =>
            {
                true // a quiet, elapsed window admits the next caller
            }
            HalfOpen::Share { pct, .. } => {
                // Spread evenly, the first admitted: call k is a trial when ceil(k·pct/100) grows.
                let k = t.asked;
                (k + 1) * pct / 100 + u64::from((k + 1) * pct % 100 != 0)
                    > k * pct / 100 + u64::from(k * pct % 100 != 0)
            }
        };
        t.asked += 1;
        if yes {
            t.in_flight += 1;
            t.granted += 1;
        }
        yes
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

    /// Opens a closed breaker of generation `gen` when the window says so.
    fn judge(&mut self, gen: u64) {
        self.roll();
        let calls = self.window.len() as u64;
        if calls < self.cfg.min_calls as u64 {
            return;
        }
        let failures = self.window.iter().filter(|e| e.failed).count() as u64;
        let slow = self.window.iter().filter(|e| e.slow).count() as u64;
        let by_failures = failures * 100 >= self.cfg.failure_rate * calls;
        let by_slow = self.cfg.slow.is_some_and(|(_, rate, strict)| {
            if strict {
                slow * 100 > rate * calls
            } else {
                slow * 100 >= rate * calls
            }
        });
        if (by_failures || by_slow) && self.state == State::Closed && self.gen == gen {
            self.go(State::Open);
        }
    }

    fn push(&mut self, failed: bool, slow: bool) {
        self.roll();
        if self.cfg.time_window.is_none() && self.window.len() == self.cfg.window {
            self.window.pop_front();
        }
        let slot = self.head;
        self.window.push_back(Entry { failed, slow, slot });
    }

    fn trial_timeout(&self) -> u64 {
        self.cfg
            .half_open_timeout
            .or(self.cfg.timeout)
            .unwrap_or(match self.cfg.half_open {
                HalfOpen::Share { window, .. } => window,
                HalfOpen::Calls(_) => self.cfg.open_for,
            })
    }

    /// A probe ended: one that answered, not failed and not slow, starts half-open as its
    /// first passed trial; anything else (failed, slow, cancelled) changes nothing.
    fn end_probe(&mut self, t: Ticket, result: Option<(bool, bool)>) {
        if t.gen != self.gen || self.state != State::Open || result != Some((false, false)) {
            return;
        }
        self.go(State::HalfOpen);
        self.trials.granted = 1;
        self.trials.ok = 1;
        self.judge_trials();
    }

    /// A trial ended; `None` when it was cancelled.
    fn end_trial(&mut self, t: Ticket, result: Option<(bool, bool)>) {
        if t.probe {
            return self.end_probe(t, result);
        }
        if t.gen != self.gen || self.state != State::HalfOpen {
            return;
        }
        let tr = &mut self.trials;
        tr.in_flight -= 1;
        match result {
            None => tr.granted -= 1,
            Some((true, _)) => tr.failed += 1,
            Some((false, _)) => tr.ok += 1,
        }
        if let Some((_, true)) = result {
            tr.slow += 1;
        }
        self.judge_trials();
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
            Seen::Ignored => c.ignored += 1,
            Seen::TimedOut => c.timed_out += 1,
            Seen::Panicked => c.panicked += 1,
            Seen::Rejected => unreachable!(),
        }
        if t.trial {
            // Trials run to completion under their own timeout and are judged by the whole
            // rule when they end: slow at the slow bound (no `half_open_slow` in the model).
            self.now = start + ran;
            let slow = timed_out || self.cfg.slow.is_some_and(|(b, _, _)| ran >= b);
            if slow {
                self.counters.slow += 1;
            }
            self.end_trial(t, Some((failed, slow)));
            return seen;
        }
        // The slow bound is watched only when it comes before the timeout.
        let bound = self
            .cfg
            .slow
            .map(|(b, _, _)| b)
            .filter(|b| timeout.is_none_or(|to| *b < to));
        // Still running past the bound: slow now, judged now (a hung call trips early).
        let marked = bound.is_some_and(|b| ran > b);
        if marked {
            self.now = start + bound.unwrap();
            self.counters.slow += 1;
            if self.current(t) {
                self.push(false, true);
                self.judge(t.gen);
            }
        }
        self.now = start + ran;
        let slow = timed_out || self.cfg.slow.is_some_and(|(b, _, _)| ran >= b);
        if slow && !marked {
            self.counters.slow += 1;
        }
        if !self.current(t) {
            return seen;
        }
        if marked {
            // Still current, so the mark's entry is the window's last: it gets the failure.
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
            } else if self.cfg.slow.is_some_and(|(b, _, _)| ran >= b) {
                Some((false, true))
            } else {
                None
            };
            if late.is_some() {
                self.counters.slow += 1;
            }
            self.end_trial(t, late);
        }
    }

    pub fn advance(&mut self, ms: u64) {
        self.now += ms;
    }
}
