//! Half-open trials: which calls become trials, and when the trials are judged.
//!
//! The default samples a *share* of traffic over a window rather than one trial request: a
//! single trial that meets a dependency still cold after a restart fails, reopens the breaker,
//! and keeps the dependency cold (see ARCHITECTURE.md, "Invariants").

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
/// short, so a lock here costs nothing on the closed-state hot path.
#[derive(Debug, Clone, Default)]
pub(crate) struct Trials {
    /// Virtual nanos when the episode began.
    pub(crate) started: u64,
    /// Calls that asked for admission (admitted or not), for the even spread.
    pub(crate) attempts: u32,
    /// Trials admitted and not finished.
    pub(crate) in_flight: u32,
    /// Trials admitted in `Calls` mode, minus cancelled ones (so a cancelled trial frees its slot).
    pub(crate) granted: u32,
    pub(crate) ok: u32,
    pub(crate) failed: u32,
    /// Finished trials at or past the trial slow bound (failed or not).
    pub(crate) slow: u32,
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
}

impl Trials {
    pub(crate) fn new(started: u64) -> Trials {
        Trials {
            started,
            ..Trials::default()
        }
    }

    /// An episode a passed probe began (issue 22): the probe is its first passed trial.
    pub(crate) fn probed(started: u64) -> Trials {
        Trials {
            started,
            granted: 1,
            ok: 1,
            ..Trials::default()
        }
    }

    /// Whether the next caller becomes a trial.
    pub(crate) fn admit(&mut self, now: u64, policy: HalfOpenPolicy) -> bool {
        let admitted = match policy {
            // A quiet window with nothing to judge admits the next caller at once.
            HalfOpenPolicy::Share { window, .. }
                if self.ok + self.failed == 0
                    && self.in_flight == 0
                    && now.saturating_sub(self.started) >= nanos(window) =>
            {
                self.attempts = self.attempts.saturating_add(1);
                true
            }
            HalfOpenPolicy::Share { pct, .. } => {
                // Admit when ceil(n·pct/100) grows: calls 0, 20, 40... for 5 %.
                let a = u64::from(self.attempts);
                let p = u64::from(pct);
                self.attempts = self.attempts.saturating_add(1);
                ((a + 1) * p).div_ceil(100) > (a * p).div_ceil(100)
            }
            HalfOpenPolicy::Calls(n) => {
                self.attempts = self.attempts.saturating_add(1);
                self.granted < n
            }
        };
        if admitted {
            self.in_flight += 1;
            self.granted += 1;
        }
        admitted
    }

    /// A trial ended without an answer (cancelled, or refused by a full bulkhead): free its slot.
    pub(crate) fn release(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.granted = self.granted.saturating_sub(1);
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

    /// The decision, if one is due at `now`: the closed state's rule (failure rate and slow-call
    /// rate) over the finished trials, so a dependency that answers correctly but slowly keeps
    /// the breaker open instead of getting the whole load back once per open period.
    pub(crate) fn verdict(&self, now: u64, rule: Rule) -> Option<Verdict> {
        match rule.policy {
            HalfOpenPolicy::Calls(n) => {
                // Every trial must pass: a slow one counts against it as a failed one does.
                if self.failed > 0 || self.slow > 0 {
                    Some(Verdict::Reopen)
                } else if self.ok >= n {
                    Some(Verdict::Close)
                } else if now.saturating_sub(self.started) >= rule.calls_wait {
                    // Fewer than `n` passed trials by the bound: not enough to close on, as
                    // resilience4j's `maxWaitDurationInHalfOpenState`, so it reopens.
                    Some(Verdict::Reopen)
                } else {
                    None
                }
            }
            HalfOpenPolicy::Share { window, .. } => {
                let done = u64::from(self.ok) + u64::from(self.failed);
                let elapsed = now.saturating_sub(self.started);
                // Judge only with at least one finished trial: a quiet window keeps sampling.
                if elapsed < nanos(window) || done == 0 {
                    return None;
                }
                let failing = u64::from(self.failed) * 100 >= u64::from(rule.failure_rate) * done;
                let slow = rule
                    .slow
                    .is_some_and(|r| r.trips(u64::from(self.slow), done));
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
        let mut t = Trials::new(0);
        let admitted = (0..100).filter(|_| t.admit(0, SHARE)).count();
        assert_eq!(admitted, 5);
        let mut t = Trials::new(0);
        assert!(t.admit(0, SHARE));
        for _ in 1..20 {
            assert!(!t.admit(0, SHARE));
        }
        assert!(t.admit(0, SHARE));
    }

    #[test]
    fn share_judges_after_the_window_only() {
        let mut t = Trials::new(0);
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
        let mut t = Trials::new(0);
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
        let mut t = Trials::new(0);
        t.admit(0, p);
        t.finish(OK);
        t.admit(0, p);
        t.finish(SLOW);
        assert_eq!(t.verdict(0, rule(p)), Some(Verdict::Reopen));
    }

    #[test]
    fn calls_mode_caps_trials_and_frees_cancelled_slots() {
        let p = HalfOpenPolicy::Calls(3);
        let mut t = Trials::new(0);
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
        let mut t = Trials::new(0);
        t.admit(0, p);
        t.finish(OK);
        assert_eq!(t.verdict(59_999_999_999, rule(p)), None);
        assert_eq!(t.verdict(60_000_000_000, rule(p)), Some(Verdict::Reopen));
    }
}
