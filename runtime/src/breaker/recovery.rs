//! Recovery that follows the dependency (issue 22): probes while open, and the ramp after
//! half-open passes. Both are off unless configured, and neither costs the closed path
//! anything: a probe is decided on the open path, which reads the clock anyway, and a ramping
//! breaker is `Closed` under a word code of its own, so plain closed stays one compare.
//!
//! Invariants:
//! - `aux` is, while `Open`, when the next probe is due (set on opening, so the first probe
//!   waits one `probe_every`: the dependency has just failed), and, while ramping, the count
//!   of calls that asked. An admitter holding a stale word may swap it across a transition; at
//!   worst that lets one extra probe through (whose result its old generation then drops) or
//!   shifts the ramp's spread by a call.
//! - While ramping, `until` is the ramp's end; plain closed has no deadline of its own.
//! - A probe passes only if it answered, did not fail and was not slow by the trial bound, so
//!   a dependency that is slow but under its timeout never gets half-open early. A probe that
//!   fails, times out or is cancelled changes nothing: the open period is never extended by
//!   it, and a cancelled one does not free the next probe early (callers that give up must
//!   not raise the probe rate).
//! - The ramp's end is not a transition: the word goes from ramping to plain closed under the
//!   same generation, so calls admitted during the ramp are still judged when they end.

use super::core::{Admission, Core};
use super::events::Reason;
use super::half_open::{TrialEnd, TrialResult, Trials};
use crate::clock::nanos;
use crate::error::Rejection;
use crate::state::{State, Word};
use crate::sync::atomic::Ordering::*;
use crate::sync::lock;

/// The ramp's even spread counts in 1/65536ths of a call.
const ONE: u64 = 1 << 16;

impl Core {
    /// While open, before the period ends: a probe, if `probe_every` is set and one is due.
    pub(super) fn probe(&self, w: Word, now: u64) -> Option<Admission> {
        let every = nanos(self.config.probe_every()?);
        let due = self.aux.load(Relaxed);
        if now < due {
            return None;
        }
        // One caller per interval wins the swap; the others are refused as before.
        self.aux
            .compare_exchange(due, now.saturating_add(every), Relaxed, Relaxed)
            .ok()?;
        Some(Admission::Probe(w.generation()))
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
    pub(super) fn start_ramp(&self, now: u64) {
        let ramp = self.config.ramp().unwrap_or_default();
        self.until.store(now.saturating_add(nanos(ramp)), Release);
        self.aux.store(0, Relaxed);
        tracing::info!(
            breaker = %self.config.name,
            ?ramp,
            from_pct = self.config.settings().ramp_start() * 100.0,
            "circuit breaker ramping traffic back in"
        );
    }

    /// Admission while ramping: the ramp's share of calls, spread evenly (the first caller
    /// admitted); the rest are refused as `Closed`. Past the ramp's end, plain closed.
    pub(super) fn admit_ramp(&self, w: Word, now: u64) -> Result<Admission, Rejection> {
        let Some(share) = self.ramp_share_at(self.until.load(Acquire), now) else {
            self.end_ramp(w);
            return Ok(Admission::Normal(w.generation()));
        };
        // Admit when ceil(n × share) grows, as half-open spreads its share; the count wraps
        // at 2^32 calls, which costs one call of spread.
        let n = self.aux.fetch_add(1, Relaxed) & u64::from(u32::MAX);
        let s = (share * ONE as f64) as u64;
        if ((n + 1) * s).div_ceil(ONE) > (n * s).div_ceil(ONE) {
            Ok(Admission::Normal(w.generation()))
        } else {
            Err(self.rejection(State::Closed, None))
        }
    }

    /// The ramp is over: plain closed, same generation, and the open period's growth forgotten.
    fn end_ramp(&self, w: Word) {
        let mut rare = lock(&self.rare);
        if self
            .word
            .compare_exchange(w.0, w.ramp_done().0, AcqRel, Acquire)
            .is_ok()
        {
            rare.opened_in_a_row = 0;
            drop(rare);
            tracing::info!(breaker = %self.config.name, "circuit breaker ramp done: all traffic admitted");
        }
    }

    /// The share admitted at `now` of a ramp that ends at `end`, `None` once it is over:
    /// linear from the half-open share to 100 %.
    fn ramp_share_at(&self, end: u64, now: u64) -> Option<f64> {
        let ramp = nanos(self.config.ramp()?);
        if now >= end || ramp == 0 {
            return None;
        }
        let left = ((end - now) as f64 / ramp as f64).min(1.0);
        let start = self.config.settings().ramp_start();
        Some(start + (1.0 - start) * (1.0 - left))
    }

    /// The share of calls admitted now, while ramping (`None`: not ramping).
    pub(crate) fn ramp_share(&self, now: u64) -> Option<f64> {
        let w = self.word();
        if !w.ramping() {
            return None;
        }
        self.ramp_share_at(self.until.load(Acquire), now)
    }
}
