//! One half-open episode's bookkeeping: which calls become trials, and when the trials are
//! judged. It lives under the breaker's lock and keeps no start time: the episode began when
//! the state did, so its callers pass the time since then (`elapsed`).
//!
//! The default samples a *share* of traffic over a window rather than one trial request: a
//! single trial that meets a dependency still cold after a restart fails, reopens the breaker,
//! and keeps the dependency cold (see ARCHITECTURE.md, "Invariants").

use super::super::spread;

const NANOS_PER_MS: u64 = 1_000_000;
use crate::clock::nanos;
use crate::settings::{HalfOpenPolicy, SlowRule};

/// What the trials decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Close,
    Reopen,
}

/// How a trial ended, as the trials see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TrialEnd {
    /// It answered (or timed out, or panicked).
    Judged(TrialResult),
    /// No answer and not late (cancelled early, or refused by a full bulkhead): slot freed.
    Released,
    /// Its caller dropped it after it was already late: judged all the same.
    Abandoned(Late),
}

/// How late an abandoned trial was when its caller gave up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Late {
    /// Past the slow bound.
    Slow,
    /// Past the trial timeout.
    TimedOut,
}

/// Book-keeping of one half-open episode. Lives under the breaker's lock: half-open is rare and
/// short, so a lock here costs nothing on the closed-state hot path. Every count starts at zero
/// when the episode begins.
#[derive(Debug, Clone, Default)]
pub(crate) struct Episode {
    /// Calls that asked for admission (admitted or not), for the even spread.
    pub(crate) attempts: u32,
    /// Trials admitted and not finished. With `ok` and `failed`, the trials granted and not
    /// released (see [`granted`](Episode::granted)).
    pub(crate) in_flight: u32,
    pub(crate) ok: u32,
    pub(crate) failed: u32,
    /// Finished trials at or past the trial slow bound (failed or not).
    pub(crate) slow: u32,
    /// Trials still in flight already past the trial slow bound (of `in_flight`): each counts
    /// as a slow answered trial in the verdict until it ends, as a closed call past the bound
    /// is a slow sample in flight. Without them, a window's end judged only the trials that
    /// had finished and closed the breaker while the others hung. A `u16` (saturating), as is
    /// `given_back`, so the episode stays 28 bytes: a keyed breaker is held under 1 KiB.
    pub(crate) marked: u16,
    /// When the last trial was admitted, in milliseconds into the episode, rounded up: every
    /// trial in flight was admitted at or before it, so once the trial bound has passed since,
    /// all of them are past it, whether or not their timers have run yet (on a paused clock
    /// moved by `advance`, a trial's task sees its timer only when next polled).
    pub(crate) last_admit_ms: u32,
    /// With a share: trials that ended with nothing to judge (ignored, cancelled early, or
    /// refused by a full bulkhead), each an admission owed to the next caller. The even
    /// spread counts callers, not trials, so it would not give a freed slot back by itself.
    pub(crate) given_back: u16,
}

/// A finished trial, as the verdict needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TrialResult {
    pub(crate) failed: bool,
    pub(crate) slow: bool,
}

/// The breaker's whole rule, as half-open applies it to its trials.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rule {
    pub(crate) policy: HalfOpenPolicy,
    pub(crate) failure_rate: u8,
    pub(crate) slow: Option<SlowRule>,
    /// With a fixed number of trials: how long the episode waits for them before it reopens
    /// (virtual nanos), so trials that never come cannot hold it half-open forever.
    pub(crate) calls_wait: u64,
    /// The latency from which a trial is slow (virtual nanos; `Core::trial_slow_bound`).
    pub(crate) trial_bound: Option<u64>,
}

impl Rule {
    /// How long into an episode its trials are judged by time: a share's window, or how long
    /// `half_open_calls` waits for its trials (virtual nanos). What a snapshot dates a due
    /// verdict by (`Core::reading_at`).
    pub(crate) fn judged_after(&self) -> u64 {
        match self.policy {
            HalfOpenPolicy::Share { window, .. } => nanos(window),
            HalfOpenPolicy::Calls(_) => self.calls_wait,
        }
    }
}

impl Episode {
    /// An episode a passed probe began (issue 22): the probe is its first passed trial.
    pub(crate) fn probed() -> Episode {
        Episode {
            ok: 1,
            ..Episode::default()
        }
    }

    /// Trials admitted and not released: in flight or finished. In `Calls` mode, the slots
    /// taken (a cancelled trial gives its slot back).
    pub(crate) fn granted(&self) -> u64 {
        u64::from(self.in_flight) + u64::from(self.ok) + u64::from(self.failed)
    }

    /// Whether the next caller becomes a trial, `elapsed` into the episode.
    pub(crate) fn admit(&mut self, elapsed: u64, policy: HalfOpenPolicy) -> bool {
        let n = u64::from(self.attempts);
        self.attempts = self.attempts.saturating_add(1);
        let admitted = match policy {
            // A quiet window with nothing to judge admits the next caller at once.
            HalfOpenPolicy::Share { window, .. }
                if self.ok + self.failed == 0
                    && self.in_flight == 0
                    && elapsed >= nanos(window) =>
            {
                true
            }
            HalfOpenPolicy::Share { .. } if self.given_back > 0 => {
                self.given_back -= 1;
                true
            }
            HalfOpenPolicy::Share { pct, .. } => spread::admits(n, u64::from(pct), 100),
            HalfOpenPolicy::Calls(n) => self.granted() < u64::from(n),
        };
        if admitted {
            self.in_flight += 1;
            self.last_admit_ms = u32::try_from(elapsed.div_ceil(NANOS_PER_MS)).unwrap_or(u32::MAX);
        }
        admitted
    }

    /// Trials in flight known to be past the trial bound `elapsed` into the episode: the
    /// marked ones, or all of them once the bound has passed since the last was admitted.
    fn late_in_flight(&self, elapsed: u64, bound: Option<u64>) -> u32 {
        let since_last = elapsed.saturating_sub(u64::from(self.last_admit_ms) * NANOS_PER_MS);
        match bound {
            Some(b) if since_last >= b => self.in_flight,
            _ => u32::from(self.marked),
        }
    }

    /// A trial in flight went past the trial slow bound.
    pub(crate) fn mark_slow(&mut self) {
        let cap = u16::try_from(self.in_flight).unwrap_or(u16::MAX);
        self.marked = self.marked.saturating_add(1).min(cap);
    }

    /// A trial marked slow in flight ended (then recorded as what it ended as).
    pub(crate) fn unmark(&mut self) {
        self.marked = self.marked.saturating_sub(1);
    }

    /// A trial ended with nothing to judge (ignored, cancelled early, or refused by a full
    /// bulkhead): its slot goes to the next caller. In `Calls` mode that is `granted` going
    /// down; with a share, an admission owed (`given_back`).
    pub(crate) fn release(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.given_back = self.given_back.saturating_add(1);
    }

    /// A trial its caller abandoned when it was already late (issue 18): it counts, so a
    /// dependency that hangs behind a caller's deadline is judged instead of sampled forever.
    /// Judged as the closed state would have: past the slow bound it is slow, past the
    /// timeout it is failed and slow (a timed-out trial is both).
    pub(crate) fn abandoned(&mut self, late: Late) {
        self.finish(TrialResult {
            failed: late == Late::TimedOut,
            slow: true,
        });
    }

    /// Records a trial's result.
    pub(crate) fn finish(&mut self, r: TrialResult) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.slow = self.slow.saturating_add(u32::from(r.slow));
        // Saturating: a long sampling window at a high rate must not wrap (or panic in debug).
        if r.failed {
            self.failed = self.failed.saturating_add(1);
        } else {
            self.ok = self.ok.saturating_add(1);
        }
    }

    /// The decision, if one is due `elapsed` into the episode: the closed state's rule (failure rate and slow-call
    /// rate) over the finished trials, so a dependency that answers correctly but slowly keeps
    /// the breaker open instead of getting the whole load back once per open period.
    pub(crate) fn verdict(&self, elapsed: u64, rule: Rule) -> Option<Verdict> {
        match rule.policy {
            HalfOpenPolicy::Calls(n) => {
                // Every trial must pass: a slow one counts against it as a failed one does,
                // from the moment it is past the bound.
                let late = self.late_in_flight(elapsed, rule.trial_bound);
                if self.failed > 0 || self.slow > 0 || late > 0 {
                    Some(Verdict::Reopen)
                } else if self.ok >= n {
                    Some(Verdict::Close)
                } else if elapsed >= rule.judged_after() {
                    // Fewer than `n` passed trials by the bound: not enough to close on, as
                    // resilience4j's `maxWaitDurationInHalfOpenState`, so it reopens.
                    Some(Verdict::Reopen)
                } else {
                    None
                }
            }
            HalfOpenPolicy::Share { .. } => {
                // Trials past the slow bound in flight are judged as slow answers.
                let marked = u64::from(self.late_in_flight(elapsed, rule.trial_bound));
                let done = u64::from(self.ok) + u64::from(self.failed) + marked;
                // Judge only with at least one judged trial: a quiet window keeps sampling.
                if elapsed < rule.judged_after() || done == 0 {
                    return None;
                }
                let failing = u64::from(self.failed) * 100 >= u64::from(rule.failure_rate) * done;
                let slow = rule
                    .slow
                    .is_some_and(|r| r.trips(u64::from(self.slow) + marked, done));
                if failing || slow {
                    Some(Verdict::Reopen)
                } else {
                    Some(Verdict::Close)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const SHARE: HalfOpenPolicy = HalfOpenPolicy::Share {
        pct: 5,
        window: Duration::from_secs(30),
    };

    fn rule(policy: HalfOpenPolicy) -> Rule {
        Rule {
            policy,
            failure_rate: 50,
            slow: None,
            calls_wait: 60_000_000_000,
            trial_bound: None,
        }
    }

    const OK: TrialResult = TrialResult {
        failed: false,
        slow: false,
    };
    const FAILED: TrialResult = TrialResult {
        failed: true,
        slow: false,
    };
    const SLOW: TrialResult = TrialResult {
        failed: false,
        slow: true,
    };

    #[test]
    fn share_admits_the_first_call_then_one_in_twenty() {
        let mut t = Episode::default();
        let admitted = (0..100).filter(|_| t.admit(0, SHARE)).count();
        assert_eq!(admitted, 5);
        let mut t = Episode::default();
        assert!(t.admit(0, SHARE));
        for _ in 1..20 {
            assert!(!t.admit(0, SHARE));
        }
        assert!(t.admit(0, SHARE));
    }

    #[test]
    fn share_gives_a_released_trials_admission_to_the_next_caller() {
        let mut t = Episode::default();
        assert!(t.admit(0, SHARE));
        t.release();
        assert!(t.admit(0, SHARE), "the freed slot goes to the next caller");
        // Then the spread goes on where it was: callers 20 and 40 (counted from 0).
        let admitted = (0..39).filter(|_| t.admit(0, SHARE)).count();
        assert_eq!(admitted, 2);
        // `Calls` mode frees its slot by `granted`, owing nothing more.
        let calls = HalfOpenPolicy::Calls(1);
        let mut t = Episode::default();
        assert!(t.admit(0, calls));
        t.release();
        assert!(t.admit(0, calls));
        assert!(!t.admit(0, calls));
    }

    #[test]
    fn share_judges_after_the_window_only() {
        let mut t = Episode::default();
        t.admit(0, SHARE);
        t.finish(OK);
        assert_eq!(t.verdict(1, rule(SHARE)), None);
        assert_eq!(t.verdict(30_000_000_000, rule(SHARE)), Some(Verdict::Close));
        t.admit(0, SHARE);
        t.finish(FAILED);
        assert_eq!(
            t.verdict(30_000_000_000, rule(SHARE)),
            Some(Verdict::Reopen)
        );
    }

    #[test]
    fn share_reopens_on_the_slow_rate_as_closed_would() {
        let p95 = Rule {
            slow: Some(SlowRule {
                bound: Duration::from_millis(500),
                rate: 5,
                strict: true,
            }),
            ..rule(SHARE)
        };
        let end = 30_000_000_000;
        let mut t = Episode::default();
        for _ in 0..20 {
            t.admit(0, SHARE);
            t.finish(OK);
        }
        // 1 slow in 20 is 5 %: p95 > bound needs *more* than 5 %.
        t.admit(0, SHARE);
        t.finish(SLOW);
        assert_eq!(t.verdict(end, p95), Some(Verdict::Close));
        t.admit(0, SHARE);
        t.finish(SLOW);
        assert_eq!(t.verdict(end, p95), Some(Verdict::Reopen));
        // Without a slow rule the same trials pass: they all answered.
        assert_eq!(t.verdict(end, rule(SHARE)), Some(Verdict::Close));
    }

    #[test]
    fn calls_mode_counts_a_slow_trial_against_it() {
        let p = HalfOpenPolicy::Calls(3);
        let mut t = Episode::default();
        t.admit(0, p);
        t.finish(OK);
        t.admit(0, p);
        t.finish(SLOW);
        assert_eq!(t.verdict(0, rule(p)), Some(Verdict::Reopen));
    }

    #[test]
    fn calls_mode_caps_trials_and_frees_cancelled_slots() {
        let p = HalfOpenPolicy::Calls(3);
        let mut t = Episode::default();
        assert!(t.admit(0, p) && t.admit(0, p) && t.admit(0, p));
        assert!(!t.admit(0, p));
        t.release();
        assert!(t.admit(0, p));
        t.finish(OK);
        t.finish(OK);
        assert_eq!(t.verdict(0, rule(p)), None);
        t.finish(OK);
        assert_eq!(t.verdict(0, rule(p)), Some(Verdict::Close));
    }

    #[test]
    fn calls_mode_reopens_when_its_trials_do_not_come_by_the_bound() {
        let p = HalfOpenPolicy::Calls(3);
        let mut t = Episode::default();
        t.admit(0, p);
        t.finish(OK);
        assert_eq!(t.verdict(59_999_999_999, rule(p)), None);
        assert_eq!(t.verdict(60_000_000_000, rule(p)), Some(Verdict::Reopen));
    }

    #[test]
    fn a_trial_marked_slow_in_flight_is_judged_as_a_slow_answer() {
        let all = HalfOpenPolicy::Share {
            pct: 100,
            window: Duration::from_secs(30),
        };
        let p95 = Rule {
            slow: Some(SlowRule {
                bound: Duration::from_millis(500),
                rate: 5,
                strict: true,
            }),
            ..rule(all)
        };
        let end = 30_000_000_000;
        let mut t = Episode::default();
        assert!(t.admit(0, all) && t.admit(0, all));
        t.finish(OK);
        assert_eq!(
            t.verdict(end, p95),
            Some(Verdict::Close),
            "one answer, one in flight"
        );
        t.mark_slow();
        assert_eq!(t.verdict(end, p95), Some(Verdict::Reopen));
        // It ends (judged as what it ended as); a mark never outnumbers the trials in flight.
        t.unmark();
        t.finish(SLOW);
        t.mark_slow();
        assert_eq!((t.marked, t.in_flight), (0, 0));
        let calls = HalfOpenPolicy::Calls(3);
        let mut t = Episode::default();
        t.admit(0, calls);
        t.mark_slow();
        assert_eq!(t.verdict(0, rule(calls)), Some(Verdict::Reopen));
    }
}
