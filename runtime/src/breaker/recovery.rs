//! Recovery that follows the dependency (issue 22): probes while open, and the ramp after
//! half-open passes. Both are off unless configured, and neither costs the closed path
//! anything: a probe is decided on the open path, which reads the clock anyway, and a ramping
//! breaker is `Closed` under a word code of its own, so plain closed stays one compare.
//!
//! Invariants:
//! - `aux` is, while `Open`, when the next probe is due (set on opening, so the first probe
//!   waits one `probe_every`: the dependency has just failed), and, while ramping, the count
//!   of calls that asked. An admitter holding a stale `Open` word may win the swap after a
//!   transition: if the breaker is open again it becomes the new period's probe (the word is
//!   read again after the swap), otherwise it is refused; during a ramp such a swap only
//!   shifts the phase of the even spread.
//! - While ramping, `until` is the ramp's end; plain closed has no deadline of its own.
//! - A probe passes only if it answered, did not fail and was not slow by the trial bound, so
//!   a dependency that is slow but under its timeout never gets half-open early. A probe that
//!   fails, times out or is cancelled changes nothing: the open period is never extended by
//!   it, and a cancelled one does not free the next probe early (callers that give up must
//!   not raise the probe rate).
//! - The ramp's end is not a transition: the word goes from ramping to plain closed under the
//!   same generation, so calls admitted during the ramp are still judged when they end, and a
//!   transition expecting the ramping word still lands (`Word::same_state`). It is found
//!   lazily, by the first admission after it, the metrics, the keyed registry's idle check
//!   and a fleet quorum (`settle_ramp`), so no timer task runs.

use super::core::{Admission, Core, LOGGED};
use super::events::Reason;
use super::half_open::{TrialEnd, TrialResult, Trials};
use crate::clock::nanos;
use crate::error::Rejection;
use crate::state::{State, Word};
use crate::sync::atomic::Ordering::*;
use crate::sync::lock;
use fusebox_settings::defaults::PROBE_BACKOFF_SHARE;

/// The ramp's even spread counts in 1/65536ths of a call.
const ONE: u64 = 1 << 16;

impl Core {
    /// While open, before the period ends: a probe, if `probe_every` is set and one is due.
    pub(super) fn probe(&self, now: u64) -> Option<Admission> {
        let every = nanos(self.config().probe_every()?);
        let due = self.aux.load(Relaxed);
        if now < due {
            return None;
        }
        // One caller per interval wins the swap; the others are refused as before.
        self.aux
            .compare_exchange(due, now.saturating_add(every), Relaxed, Relaxed)
            .ok()?;
        // Read again: a caller holding a stale word probes for the period that is open now.
        let cur = self.word();
        (cur.state() == State::Open).then(|| Admission::Probe(cur.generation()))
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
        let now = self.clock.now();
        let mut rare = lock(&self.rare);
        let cur = self.word();
        if cur.generation() != gen || cur.state() != State::Open {
            return;
        }
        let half_open = self.switch(&mut rare, cur, State::HalfOpen, Reason::ProbePassed, now);
        rare.trials = Trials::probed(now);
        let verdict = rare.trials.verdict(now, self.trial_rule());
        let closed = verdict.map(|v| self.apply_verdict(&mut rare, self.word(), v, now));
        drop(rare);
        self.events.emit(half_open);
        if let Some(t) = closed {
            self.events.emit(t);
        }
    }

    /// Starts the ramp; called under the lock as the breaker closes on passed trials.
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
        if !held || !self.config().settings().probe_backs_off() {
            return;
        }
        let now = self.clock.now();
        let since = self.unhealthy_since.load(Relaxed) & !LOGGED;
        let away = now.saturating_sub(since.min(now));
        let cap = nanos(self.config().settings().open_for_max());
        let wait = (away / u64::from(PROBE_BACKOFF_SHARE)).min(cap);
        self.aux.fetch_max(now.saturating_add(wait), Relaxed);
    }

    pub(super) fn start_ramp(&self, now: u64) {
        let ramp = self.config().ramp().unwrap_or_default();
        self.until.store(now.saturating_add(nanos(ramp)), Release);
        self.aux.store(0, Relaxed);
        tracing::info!(
            breaker = %self.config.name,
            ?ramp,
            from_pct = self.config().settings().ramp_start() * 100.0,
            "circuit breaker ramping traffic back in"
        );
    }

    /// Admission while ramping: the ramp's share of calls, spread evenly (the first caller
    /// admitted); the rest are refused as `Closed`. Past the ramp's end, plain closed; `None`
    /// when the word had already moved on, so the caller looks again.
    pub(super) fn admit_ramp(&self, w: Word, now: u64) -> Option<Result<Admission, Rejection>> {
        let Some(share) = self.ramp_share_at(self.until.load(Acquire), now) else {
            return self
                .end_ramp(w)
                .then_some(Ok(Admission::Normal(w.generation())));
        };
        // Admit when ceil(n × share) grows, as half-open spreads its share; the count wraps
        // at 2^32 calls, which costs one call of spread.
        let n = self.aux.fetch_add(1, Relaxed) & u64::from(u32::MAX);
        let s = (share * ONE as f64) as u64;
        Some(if ((n + 1) * s).div_ceil(ONE) > (n * s).div_ceil(ONE) {
            Ok(Admission::Normal(w.generation()))
        } else {
            Err(self.rejection(State::Closed, None))
        })
    }

    /// Ends a ramp whose time is up, if the breaker is in one; for the readers that are not
    /// admissions (metrics, the keyed registry's idle check, a fleet quorum).
    pub(crate) fn settle_ramp(&self, now: u64) {
        let w = self.word();
        if w.ramping() && now >= self.until.load(Acquire) {
            self.end_ramp(w);
        }
    }

    /// The ramp is over: plain closed, same generation, and the open period's growth
    /// forgotten. False if the word was no longer `w`.
    fn end_ramp(&self, w: Word) -> bool {
        let mut rare = lock(&self.rare);
        let swapped = self
            .word
            .compare_exchange(w.0, w.ramp_done().0, AcqRel, Acquire)
            .is_ok();
        if swapped {
            rare.opened_in_a_row = 0;
            drop(rare);
            tracing::info!(breaker = %self.config.name, "circuit breaker ramp done: all traffic admitted");
        }
        swapped
    }

    /// The share admitted at `now` of a ramp that ends at `end`, `None` once it is over:
    /// linear from the half-open share to 100 %.
    fn ramp_share_at(&self, end: u64, now: u64) -> Option<f64> {
        let ramp = nanos(self.config().ramp()?);
        if now >= end || ramp == 0 {
            return None;
        }
        let left = ((end - now) as f64 / ramp as f64).min(1.0);
        let start = self.config().settings().ramp_start();
        Some(start + (1.0 - start) * (1.0 - left))
    }

    /// The share of calls admitted now, while ramping (`None`: not ramping).
    pub(crate) fn ramp_share(&self, now: u64) -> Option<f64> {
        self.settle_ramp(now);
        let w = self.word();
        if !w.ramping() {
            return None;
        }
        self.ramp_share_at(self.until.load(Acquire), now)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::breaker::core::Core;
    use crate::breaker::events::{Events, Reason};
    use crate::settings::BreakerBuilder;
    use crate::state::State;
    use crate::sync::lock;

    /// A core closed on passed trials, ramping.
    fn ramping() -> Core {
        let config = BreakerBuilder::new("ramp-unit")
            .ramp(Duration::from_secs(10))
            .config()
            .unwrap();
        let core = Core::new(config, Events::new());
        let now = core.clock.now();
        assert!(core.transition(None, State::Open, Reason::Forced, now));
        assert!(core.transition(None, State::HalfOpen, Reason::OpenElapsed, now));
        let mut rare = lock(&core.rare);
        let passed = Reason::TrialsPassed { ok: 1, failed: 0 };
        let _ = core.switch(&mut rare, core.word(), State::Closed, passed, now);
        drop(rare);
        assert!(core.word().ramping());
        core
    }

    #[test]
    fn a_trip_judged_on_the_ramping_word_lands_after_the_ramp_ends() {
        // A judge loaded the ramping word; the ramp's end swapped in plain closed (same
        // generation) before the judge's transition took the lock.
        let core = ramping();
        let judged = core.word();
        assert!(core.end_ramp(judged));
        assert!(core.word().plain_closed());
        let now = core.clock.now();
        assert!(core.transition(Some(judged), State::Open, Reason::Forced, now));
        assert_eq!(core.state(), State::Open);
    }

    #[test]
    fn an_admission_whose_ramp_end_lost_to_a_transition_looks_again() {
        let core = ramping();
        let stale = core.word();
        let now = core.clock.now();
        assert!(core.transition(None, State::Open, Reason::Forced, now));
        // Past the ramp's end with a stale word: no admission on the old generation.
        let late = now + 40_000_000_000;
        assert!(core.admit_ramp(stale, late).is_none());
        assert_eq!(core.state(), State::Open);
    }
}
