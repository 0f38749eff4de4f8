//! A call's admission ticket: it measures the call, enforces the timeouts, and records the
//! outcome exactly once, in `finish` or, if the call is dropped or panics, in `Drop`.
//!
//! Recording is one small function per job: `count` (the outcome's lifetime counter, a
//! success's too), `record_sample` (a closed call's sample, or its in-flight slow sample
//! completed) and the answered-at-once path here; `record_trial` (a trial's or probe's
//! verdict) in `trial.rs`; `mark_slow_in_flight` and `record_slow_at_bound` (the slow-in-flight
//! ticket, and a refusal behind slow calls) in `slow.rs`. Driving the call under its timers is
//! `drive.rs`.

mod drive;
mod slow;
mod trial;

pub(crate) use drive::Drive;

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::core::{bump, Admission, Core};
use super::live::Layer;
use crate::settings::BreakerConfig;
use crate::window::{Sample, Ticket, Totals, Window};

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Success,
    /// An `Err` the failure predicate does not count (the dependency answered): recorded
    /// as a call that did not fail.
    Excluded,
    /// Neither success nor failure: no place in the window, and a trial's slot given back.
    Ignored,
    Failure,
    TimedOut,
    Panicked,
    /// Dropped before it finished.
    Cancelled,
    /// Admitted by the breaker, then refused by a full bulkhead: never ran.
    BulkheadFull,
    /// Refused by a full bulkhead whose every slot held one of this breaker's calls already
    /// past the slow bound, or right after its last call ended slow: counted as a slow call
    /// (only under a slow rule derived from `timeout`, see `Settings::refusals_count_as_slow`).
    FullBehindSlow,
}

impl Outcome {
    fn failed(self) -> bool {
        matches!(
            self,
            Outcome::Failure | Outcome::TimedOut | Outcome::Panicked
        )
    }
}

pub(crate) struct Permit<'a> {
    core: &'a Core,
    gen: u64,
    /// A half-open trial or a probe: runs under the trial timeout, judged by the trial bound.
    trial: bool,
    /// A probe let through while open (`probe_every`).
    probe: bool,
    /// A ramp call while the dependency warms: the trial timeout and bound, in the window.
    warming: bool,
    start: Option<Instant>,
    /// The slow bound the call runs under, fixed when its timing starts (`slow_bound`).
    slow_at: Duration,
    /// Set once the call was counted as slow while still in flight: where its sample went.
    slow_ticket: Option<Ticket>,
    /// The slow counter was bumped in flight (even if the window no longer took the sample).
    counted_slow: bool,
    /// True while the wrapped future's own `poll` runs: a panic leaves it set, so `Drop` can
    /// tell the call's panic from an unrelated unwind (a `join!` sibling, a `block_on` caller).
    in_poll: bool,
    done: bool,
    /// Counted in the core's calls that wait (`Core::waiting`): from the first wait, for a
    /// bulkhead slot or of the call itself, to the end.
    waiting: bool,
    /// Forced closed without recording: counters only, never the window.
    unrecorded: bool,
    /// The live settings that admitted the call (`live.rs`), held for the call so it finishes
    /// under them; `None`: the code's settings and window.
    layer: Option<Arc<Layer>>,
}

impl<'a> Permit<'a> {
    /// A permit under the code's settings.
    pub(crate) fn new(core: &'a Core, a: Admission) -> Permit<'a> {
        Permit::under(core, a, None)
    }

    /// A permit for `a` (its live mark taken by `Admission::take_live`), under `layer`'s settings
    /// when live ones admitted it (`live.rs`): the permit holds the layer for the call.
    // Inlined into the call path (issue 29): out of line it cost ~35 instructions a call.
    #[inline]
    pub(crate) fn under(core: &'a Core, a: Admission, layer: Option<Arc<Layer>>) -> Permit<'a> {
        let (gen, trial, probe) = match a {
            Admission::Normal(g) | Admission::Unrecorded(g) | Admission::Warming(g) => {
                (g, false, false)
            }
            Admission::Trial(g) => (g, true, false),
            Admission::Probe(g) => (g, true, true),
        };

        Permit {
            core,
            gen,
            trial,
            probe,
            warming: matches!(a, Admission::Warming(_)),
            start: None,
            slow_at: Duration::ZERO,
            slow_ticket: None,
            counted_slow: false,
            in_poll: false,
            done: false,
            waiting: false,
            unrecorded: matches!(a, Admission::Unrecorded(_)),
            layer,
        }
    }

    /// The wrapped future panicked in a poll (and the caller caught it): `in_poll` was left set.
    pub(crate) fn panicked(&self) -> bool {
        self.in_poll
    }

    /// When the call was first seen waiting (`None`: it answered in its first poll).
    pub(crate) fn started(&self) -> Option<Instant> {
        self.start
    }

    /// A call that ran elsewhere, judged as if it had run under `core` (a shadow's replay of
    /// the live call, `shadow.rs`): timed from `start`, so latency and the slow rule are
    /// `core`'s verdict on it, and cut off by `core`'s timeout had it run that long.
    pub(crate) fn replay(core: &'a Core, a: Admission, start: Option<Instant>, outcome: Outcome) {
        let mut p = Permit::new(core, a);
        p.start = start;
        p.slow_at = p.sample_bound().unwrap_or_default();
        let late = start
            .zip(p.timeout())
            .is_some_and(|(s, t)| s.elapsed() >= t);
        p.finish(if late { Outcome::TimedOut } else { outcome });
    }

    /// The settings this call runs under.
    pub(super) fn config(&self) -> &BreakerConfig {
        match &self.layer {
            Some(l) => &l.config,
            None => self.core.code_config(),
        }
    }

    /// The window this call records into: the live layer's own, else the breaker's.
    fn window(&self) -> &Window {
        match self.layer.as_ref().and_then(|l| l.window.as_deref()) {
            Some(w) => w,
            None => &self.core.window,
        }
    }

    /// Judges `t` unless a live change moved judging to another window since admission.
    #[inline]
    fn judge(&self, t: Totals) {
        judge_in(self.core, self.window(), self.layer.is_some(), self.gen, t);
    }

    /// The bound at which the call's window sample is slow: the slow rule's, or for a
    /// warming ramp call the trial bound it runs under.
    fn sample_bound(&self) -> Option<Duration> {
        if self.warming {
            self.core.trial_slow_bound(self.config())
        } else {
            self.core.slow_bound(self.config())
        }
    }

    fn timeout(&self) -> Option<Duration> {
        if self.trial || self.warming {
            Some(self.core.trial_timeout_under(self.config()))
        } else {
            self.config().timeout()
        }
    }

    /// Whether the call's result goes into the window: its generation still holds, it was
    /// not let through unrecorded, and a warming call's ramp still lasts (the window starts
    /// anew as a warming ramp ends: the calls after it are judged by the rule alone).
    fn is_current(&self) -> bool {
        if self.unrecorded {
            return false;
        }
        let w = self.core.word();
        w.generation() == self.gen && w.state().admits_all() && (w.ramping() || !self.warming)
    }

    /// Records how the call ended. Consumes the permit; `Drop` then does nothing.
    /// The call waits (for a bulkhead slot, or its first poll returned `Pending`): counted in
    /// the core's calls that wait until it ends, once.
    pub(crate) fn begins_waiting(&mut self) {
        if !self.waiting {
            self.waiting = true;
            self.core.waiting_added();
        }
    }

    /// A probe let through while open (`probe_every`).
    pub(crate) fn is_probe(&self) -> bool {
        self.probe
    }

    pub(crate) fn finish(mut self, outcome: Outcome) {
        self.record(outcome);
    }

    /// Records how the call ended, once: its lifetime counter, then what the outcome tells
    /// the breaker (a trial's verdict, a closed-window sample, or nothing).
    fn record(&mut self, outcome: Outcome) {
        if self.done {
            return;
        }
        self.record_outcome(outcome);
        if self.layer.as_ref().is_some_and(|l| l.first_to_end()) {
            self.judge_as_it_is();
        }
    }

    /// The first call to end under a live change judges the window as it is: a new threshold
    /// is judged at the next call, whatever its outcome (`live/mod.rs`).
    #[cold]
    fn judge_as_it_is(&self) {
        if self.trial || !self.is_current() {
            return;
        }
        let now = self.core.clock().now();
        self.judge(self.window().totals(now));
    }

    fn record_outcome(&mut self, outcome: Outcome) {
        self.done = true;
        if self.waiting {
            self.core.waiting_ended();
        }

        if outcome == Outcome::Success && self.start.is_none() && !self.trial {
            return self.record_answered_at_once();
        }
        if self.counted_slow {
            self.core.slow_in_flight_ended();
        }
        self.count(outcome);
        if self.trial {
            return self.record_trial(outcome);
        }
        match outcome {
            // Never ran: counted as one more call past the slow bound, as if marked in flight.
            Outcome::FullBehindSlow if self.is_current() => {
                self.record_slow_at_bound();
            }
            // Ignored: no place in the window, so a sample recorded slow in flight leaves it.
            Outcome::Ignored => self.withdraw_slow_sample(),
            // Nothing for the window (a sample slow in flight stays there, slow: a caller
            // that gave up on a hanging call still tells of the hang).
            Outcome::FullBehindSlow | Outcome::Cancelled | Outcome::BulkheadFull => {}
            Outcome::Success
            | Outcome::Excluded
            | Outcome::Failure
            | Outcome::TimedOut
            | Outcome::Panicked => self.record_sample(outcome),
        }
    }

    /// Bumps the one lifetime counter of the outcome.
    fn count(&self, outcome: Outcome) {
        let c = &self.core.counters;
        bump(match outcome {
            // An `Err` the `failure` predicate excludes is a success (the dependency answered),
            // in the window and here; `ignored` is the ignored outcome's own (issue 31).
            Outcome::Success | Outcome::Excluded => {
                c.succeed();
                return;
            }
            Outcome::Ignored => &c.ignored,
            Outcome::Failure => &c.failed,
            Outcome::TimedOut => &c.timeouts,
            Outcome::Panicked => &c.panicked,
            Outcome::Cancelled => &c.cancelled,
            Outcome::BulkheadFull | Outcome::FullBehindSlow => &c.rejected_full,
        });
    }

    /// A normal call that answered (or timed out, or panicked): its sample in the closed
    /// window, or its in-flight slow sample completed, then judged.
    fn record_sample(&self, outcome: Outcome) {
        let core = self.core;
        // A call that answered in its first poll was not timed (`drive`): no clock read.
        let ended = self.start.map(|s| (Instant::now(), s));
        let latency = ended.map(|(now, s)| now - s).unwrap_or_default();
        let slow = outcome == Outcome::TimedOut
            || (self.config().slow().is_some() && past(self.config(), latency, self.slow_bound()));
        if !self.counted_slow && slow {
            bump(&core.counters.slow);
        }
        if self.config().settings().slow_rule_derived() {
            core.ended_slow(slow);
            // An answer in the usual range teaches the usual latency (`usual.rs`); a warming
            // dependency's answers are not its usual ones.
            let answered = matches!(outcome, Outcome::Success | Outcome::Excluded);
            if answered && !slow && self.start.is_some() && !self.warming {
                core.usual.observe(latency);
            }
        }
        if !self.is_current() {
            if self.config().settings().trials_pass_by_answering() {
                match outcome {
                    Outcome::Success | Outcome::Excluded => core.episode_call_ended(true),
                    Outcome::Failure | Outcome::TimedOut => core.episode_call_ended(false),
                    _ => {}
                }
            }
            return;
        }
        let failed = outcome.failed();
        let at = || match ended {
            Some((now, _)) => core.clock().nanos(now),
            None => core.clock().now(),
        };
        let sample = Sample {
            failed,
            slow,
            latency,
        };
        let totals = match self.slow_ticket {
            // Counted slow in flight: add its failure and real latency. Only a failure can
            // raise a rate now.
            Some(t)
                if self
                    .window()
                    .amend(at(), t, self.slow_bound(), failed, latency) =>
            {
                failed.then(|| self.window().totals(at()))
            }
            // Its slow sample left the window while it ran (aged out, or pushed out by newer
            // calls): it ends as a sample of its own, as a call under no slow rule does, so
            // its failure is never lost.
            _ => self.window().record(at, sample).1,
        };
        if let Some(t) = totals {
            self.judge(t);
        }
    }
}

impl Permit<'_> {
    /// The common case, the general path of `record` written out for it: a normal call that
    /// succeeded within its first poll. Not timed (latency zero, so never slow-marked in
    /// flight), no outcome to match: the success counted, one load to check the generation,
    /// one window record.
    #[inline]
    fn record_answered_at_once(&self) {
        let core = self.core;
        let thread = core.counters.succeed();
        // Latency zero is slow only under a zero bound, which the settings refuse; kept so
        // this path says exactly what the general one does.
        let slow = self.config().slow().is_some_and(|r| r.bound.is_zero());
        if slow {
            bump(&core.counters.slow);
        }
        if !self.is_current() {
            return;
        }
        record_at_once(
            core,
            self.window(),
            self.layer.is_some(),
            self.gen,
            slow,
            thread,
        );
    }
}

/// A current success that answered within its first poll (latency zero), into `window`, judged
/// if the window says so: the permit's `record_answered_at_once` and `closed.rs`'s permit-free
/// path both end here.
#[inline]
pub(super) fn record_at_once(
    core: &Core,
    window: &Window,
    layered: bool,
    gen: u64,
    slow: bool,
    thread: usize,
) {
    let now = || core.clock().now();
    let totals = if slow {
        let sample = Sample {
            slow: true,
            ..Sample::ANSWERED_AT_ONCE
        };
        window.record(now, sample).1
    } else {
        window.record_success(now, thread)
    };
    if let Some(t) = totals {
        judge_in(core, window, layered, gen, t);
    }
}

/// Judges `t`, recorded into `window` by a call of generation `gen` (`layered`: admitted under
/// live settings), unless a live change moved judging to another window since admission.
#[inline]
fn judge_in(core: &Core, window: &Window, layered: bool, gen: u64, t: Totals) {
    if (layered || core.word().live())
        && !std::ptr::eq(window, core.with_window(|w| w as *const Window))
    {
        return;
    }
    core.judge(gen, t);
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if !self.done {
            // Dropped mid-call: a panic only if it left the wrapped future's own `poll`;
            // dropped during someone else's unwind (a `join!` sibling) it is a cancellation.
            let outcome = if self.in_poll {
                Outcome::Panicked
            } else {
                Outcome::Cancelled
            };
            self.record(outcome);
        }
    }
}

/// Whether a call that ran `latency` is slow by `bound`: past it, or at it too unless `bound`
/// is a percentile rule's own (`trip_p95 = "500ms"` opens when p95 *exceeds* 500 ms, so calls
/// all at the bound do not open it: `SlowRule::is_slow`). A call still running is watched from
/// the bound itself either way: it can only end later.
pub(crate) fn past(c: &BreakerConfig, latency: Duration, bound: Duration) -> bool {
    let strict = c.slow().is_some_and(|r| r.strict && r.bound == bound);
    latency > bound || (!strict && latency == bound)
}
