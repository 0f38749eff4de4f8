//! The ramp after half-open passes (issue 22, `ramp`): closed, admitting a share of calls that
//! grows linearly from the half-open share to 100 %, spread evenly. Off unless configured, and
//! free for the closed path: a ramping breaker is `Closed` under a word code of its own
//! (`state.rs`), so plain closed stays one compare.
//!
//! Invariants:
//! - The ramp begins when its state does: it ends `ramp` after `Core::state_since`, which the
//!   transition writes before the word turns to ramping. An admitter holding a stale ramping
//!   word after a transition reads the newer state's start: at worst one call is refused or
//!   admitted as a ramp begun then would, and its end's swap fails, so it looks again.
//! - [`Ramp::credit`] sums the shares of the callers that asked during this ramp, for the even
//!   spread; it is zeroed before the word turns to ramping. A stale admitter's add only shifts
//!   the phase.
//! - The ramp's end is not a transition: the word goes from ramping to plain closed under the
//!   same generation, so calls admitted during the ramp are still judged when they end, and a
//!   transition expecting the ramping word still lands (`Word::same_state`). It is found
//!   lazily, by the first admission after it, the metrics, the keyed registry's idle check
//!   and a fleet quorum (`settle_ramp`), so no timer task runs.

use super::core::{Admission, Core};
use super::spread;
use crate::clock::nanos;
use crate::error::Rejection;
use crate::state::{State, Word};
use crate::sync::atomic::{AtomicU32, Ordering::*};
use crate::sync::lock;

/// The ramp's even spread counts in 1/65536ths of a call.
const ONE: u64 = 1 << 16;

/// The current ramp's figures (its start is `Core::state_since`).
#[derive(Default)]
pub(crate) struct Ramp {
    /// The shares of the callers that asked during this ramp (admitted or not), summed in
    /// 1/65536ths of a call: each caller owns its stretch of the sum and is admitted when a
    /// whole call ends in it (`spread::crosses`), so however fast the share grows, the calls
    /// admitted follow it. Wraps at 2^16 calls' worth, a multiple of a call: nothing is lost.
    credit: AtomicU32,
}

impl Core {
    /// Starts the ramp; called under the lock as the breaker closes on passed trials.
    pub(super) fn start_ramp(&self) {
        self.ramp.credit.store(0, Relaxed);
        let c = self.config();
        // A shadow's core (`shadow.rs`) logs nothing as the live breaker.
        if self.events.is_live() {
            tracing::info!(
                breaker = %c.name,
                ramp = ?c.ramp().unwrap_or_default(),
                from_pct = c.settings().ramp_start() * 100.0,
                "circuit breaker ramping traffic back in"
            );
        }
    }

    /// Admission while ramping: the ramp's share of calls, spread evenly (the first caller
    /// admitted); the rest are refused as `Closed`. Past the ramp's end, plain closed; `None`
    /// when the word had already moved on, so the caller looks again.
    pub(super) fn admit_ramp(&self, w: Word, now: u64) -> Option<Result<Admission, Rejection>> {
        let Some(share) = self.ramp_share_at(now) else {
            return self
                .end_ramp(w, now)
                .then_some(Ok(Admission::Normal(w.generation())));
        };
        // At most ONE, so the sum never skips a whole call as it wraps.
        let s = ((share * ONE as f64) as u32).min(ONE as u32);
        let before = u64::from(self.ramp.credit.fetch_add(s, Relaxed));
        Some(if spread::crosses(before, u64::from(s), ONE) {
            Ok(if self.warms() {
                Admission::Warming(w.generation())
            } else {
                Admission::Normal(w.generation())
            })
        } else {
            Err(self.rejection(State::Closed, None))
        })
    }

    /// Ends a ramp whose time is up, if the breaker is in one; for the readers that are not
    /// admissions (metrics, the keyed registry's idle check, a fleet quorum).
    pub(crate) fn settle_ramp(&self, now: u64) {
        let w = self.word();
        if w.ramping() && self.ramp_share_at(now).is_none() {
            self.end_ramp(w, now);
        }
    }

    /// Whether this ramp's calls warm a dependency back from failures: under settings whose
    /// trials pass by answering (a `timeout` and no recovery setting), after an episode that
    /// began with failures. Such a dependency (seed 000's provider, back cold) answers the
    /// ramp as slowly as it answered the trials that let it back, and warms only by serving
    /// them: cut at `timeout`, the ramp's calls relapsed it every few seconds, each cycle
    /// sending it a few dozen requests (a provider needing 200 was back after 35 s at 50 calls
    /// a second, 4 s with this). After slowness the ramp is judged as any closed call.
    pub(super) fn warms(&self) -> bool {
        self.config().settings().trials_pass_by_answering() && !self.slow_episode()
    }

    /// The ramp is over: plain closed, same generation. Under settings whose ramp warms
    /// (`warms`), the window starts anew, so that the calls after the ramp are judged by the
    /// rule alone, and the episode goes on until they have filled it (`Core::relapses`);
    /// otherwise the open period's growth is forgotten here. False if the word was no
    /// longer `w`.
    fn end_ramp(&self, w: Word, now: u64) -> bool {
        let mut rare = lock(&self.rare);
        let swapped = self
            .word
            .compare_exchange(w.0, w.ramp_done().0, AcqRel, Acquire)
            .is_ok();
        if swapped {
            if self.config().settings().trials_pass_by_answering() {
                self.with_window(|win| win.reset(now));
            } else {
                rare.opened_in_a_row = 0;
                self.slow_episode
                    .store(super::slowness::episode::NONE, Relaxed);
            }
            drop(rare);
            if self.events.is_live() {
                tracing::info!(breaker = %self.config().name, "circuit breaker ramp done: all traffic admitted");
            }
        }
        swapped
    }

    /// The share admitted at `now` by the ramp that began with the state, `None` once it is
    /// over: linear from the half-open share to 100 %.
    fn ramp_share_at(&self, now: u64) -> Option<f64> {
        let ramp = nanos(self.config().ramp()?);
        let into = self.in_state_for(now);
        if into >= ramp {
            return None;
        }
        let left = (ramp - into) as f64 / ramp as f64;
        let start = self.config().settings().ramp_start();
        Some(start + (1.0 - start) * (1.0 - left))
    }

    /// The share of calls admitted now, while ramping (`None`: not ramping).
    pub(crate) fn ramp_share(&self, now: u64) -> Option<f64> {
        self.settle_ramp(now);
        if !self.word().ramping() {
            return None;
        }
        self.ramp_share_at(now)
    }

    /// `ramp_share` as a reader sees it who reports `seen` (`state_at`), changing nothing: a
    /// half-open whose passed trials are due to close it is reported closed, so it is
    /// reported ramping from the ramp's first share too, as its next caller will make it, not
    /// as fully open. A ramp over at `now` reads as over, and is left for the breaker's next
    /// call to end: a metrics snapshot taken on a clock ahead of the breaker's (a parallel
    /// test's) must not end its ramp, nor forget its open periods' growth with it.
    pub(crate) fn ramp_share_seen(&self, seen: State, now: u64) -> Option<f64> {
        let w = self.word();
        if seen == State::Closed && w.state() == State::HalfOpen {
            self.config().ramp()?;
            return Some(self.config().settings().ramp_start());
        }
        if !w.ramping() {
            return None;
        }
        self.ramp_share_at(now)
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
        let now = core.clock().now();
        assert!(core.transition(None, State::Open, Reason::Forced, now));
        assert!(core.transition(None, State::HalfOpen, Reason::OpenElapsed, now));
        let mut rare = lock(&core.rare);
        let passed = Reason::TrialsPassed { ok: 1, failed: 0 };
        let _ = core.transition_locked(&mut rare, core.word(), State::Closed, passed, now);
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
        assert!(core.end_ramp(judged, core.clock().now()));
        assert!(core.word().plain_closed());
        let now = core.clock().now();
        assert!(core.transition(Some(judged), State::Open, Reason::Forced, now));
        assert_eq!(core.state(), State::Open);
    }

    #[test]
    fn an_admission_whose_ramp_end_lost_to_a_transition_looks_again() {
        let core = ramping();
        let stale = core.word();
        let now = core.clock().now();
        assert!(core.transition(None, State::Open, Reason::Forced, now));
        // Past the ramp's end with a stale word: no admission on the old generation.
        let late = now + 40_000_000_000;
        assert!(core.admit_ramp(stale, late).is_none());
        assert_eq!(core.state(), State::Open);
    }
}
