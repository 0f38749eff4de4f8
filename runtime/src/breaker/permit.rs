//! A call's admission ticket: it measures the call, enforces the timeouts, and records the
//! outcome exactly once, in `finish` or, if the call is dropped or panics, in `Drop`.

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{sleep_until, Instant};

use super::core::{bump, Admission, Core};
use super::half_open::{Late, TrialEnd};
use crate::window::{Sample, Ticket};

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Success,
    /// An `Err` the failure predicate does not count (the dependency answered).
    Ignored,
    Failure,
    TimedOut,
    Panicked,
    /// Dropped before it finished.
    Cancelled,
    /// Admitted by the breaker, then refused by a full bulkhead: never ran.
    BulkheadFull,
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
    trial: bool,
    start: Option<Instant>,
    /// Set once the call was counted as slow while still in flight.
    slow_ticket: Option<Ticket>,
    /// The slow counter was bumped in flight (even if the window no longer took the sample).
    counted_slow: bool,
    /// True while the wrapped future's own `poll` runs: a panic leaves it set, so `Drop` can
    /// tell the call's panic from an unrelated unwind (a `join!` sibling, a `block_on` caller).
    in_poll: bool,
    done: bool,
}

impl<'a> Permit<'a> {
    pub(crate) fn new(core: &'a Core, a: Admission) -> Permit<'a> {
        let (gen, trial) = match a {
            Admission::Normal(g) => (g, false),
            Admission::Trial(g) => (g, true),
        };
        Permit {
            core,
            gen,
            trial,
            start: None,
            slow_ticket: None,
            counted_slow: false,
            in_poll: false,
            done: false,
        }
    }

    fn timeout(&self) -> Option<Duration> {
        if self.trial {
            Some(self.core.trial_timeout())
        } else {
            self.core.config.timeout
        }
    }

    /// Runs the call under its timeout and the slow-call watch.
    ///
    /// Returns `Err(after)` when the timeout elapsed (the call's future is dropped).
    /// Without a timeout or slow rule this is a plain `.await`: no timer is created.
    pub(crate) async fn drive<F: Future>(&mut self, fut: F) -> Result<F::Output, Duration> {
        let start = Instant::now();
        self.start = Some(start);
        // A deadline past the clock's range is no deadline (`Instant + Duration` would panic).
        let within = |d: &Duration| start.checked_add(*d).is_some();
        let timeout = self.timeout().filter(within);
        // Trials are judged on failures only: a dependency warming up is slow by nature,
        // and `half_open_timeout` is the latency bound for trials.
        let slow = if self.trial {
            None
        } else {
            self.core.config.slow.map(|r| r.bound)
        };
        let slow = slow
            .filter(within)
            .filter(|s| timeout.is_none_or(|t| *s < t));
        let mut fut = pin!(fut);
        if slow.is_none() && timeout.is_none() {
            return Ok(poll_fn(|cx| self.poll_call(fut.as_mut(), cx)).await);
        }
        let first = start + slow.or(timeout).unwrap_or_default();
        let mut timer = pin!(sleep_until(first));
        let mut watching_slow = slow.is_some();
        let mut timer_live = true;
        poll_fn(|cx| {
            if let Poll::Ready(v) = self.poll_call(fut.as_mut(), cx) {
                return Poll::Ready(Ok(v));
            }
            while timer_live && timer.as_mut().poll(cx).is_ready() {
                if watching_slow {
                    watching_slow = false;
                    self.mark_slow_in_flight();
                    match timeout {
                        Some(t) => timer.as_mut().reset(start + t),
                        None => timer_live = false,
                    }
                } else if let Some(t) = timeout {
                    return Poll::Ready(Err(t));
                }
            }
            Poll::Pending
        })
        .await
    }

    /// Polls the wrapped future with `in_poll` set; a panic skips the reset, so it stays set.
    fn poll_call<F: Future>(&mut self, fut: Pin<&mut F>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.in_poll = true;
        let r = fut.poll(cx);
        self.in_poll = false;
        r
    }

    /// A call still running past the slow bound counts as slow now, so a dependency that
    /// hangs trips the breaker before its calls time out.
    fn mark_slow_in_flight(&mut self) {
        let core = self.core;
        bump(&core.counters.slow);
        self.counted_slow = true;
        if !self.is_current() {
            return;
        }
        let bound = core.config.slow.map(|r| r.bound).unwrap_or_default();
        let sample = Sample {
            failed: false,
            slow: true,
            latency: bound,
        };
        let (ticket, totals) = core.window.record(core.clock.now(), sample);
        self.slow_ticket = Some(ticket);
        core.judge(self.gen, totals);
    }

    fn is_current(&self) -> bool {
        let w = self.core.word();
        w.generation() == self.gen && w.state().admits_all()
    }

    /// Records how the call ended. Consumes the permit; `Drop` then does nothing.
    pub(crate) fn finish(mut self, outcome: Outcome) {
        self.record(outcome);
    }

    fn record(&mut self, outcome: Outcome) {
        if self.done {
            return;
        }
        self.done = true;
        let core = self.core;
        let c = &core.counters;
        bump(match outcome {
            Outcome::Success => &c.succeeded,
            Outcome::Ignored => &c.ignored,
            Outcome::Failure => &c.failed,
            Outcome::TimedOut => &c.timeouts,
            Outcome::Panicked => &c.panicked,
            Outcome::Cancelled => &c.cancelled,
            Outcome::BulkheadFull => &c.rejected_full,
        });
        if self.trial {
            let result = match outcome {
                Outcome::BulkheadFull => TrialEnd::Released,
                Outcome::Cancelled => self.abandoned_trial(),
                _ => TrialEnd::Judged(outcome.failed()),
            };
            core.finish_trial(self.gen, result);
            return;
        }
        if matches!(outcome, Outcome::Cancelled | Outcome::BulkheadFull) {
            return;
        }
        let now = Instant::now();
        let latency = self.start.map(|s| now - s).unwrap_or_default();
        let slow =
            outcome == Outcome::TimedOut || core.config.slow.is_some_and(|r| latency >= r.bound);
        if !self.counted_slow && slow {
            bump(&c.slow);
        }
        if !self.is_current() {
            return;
        }
        let failed = outcome.failed();
        let at = core.clock.nanos(now);
        let totals = match self.slow_ticket {
            Some(t) => {
                let bound = core.config.slow.map(|r| r.bound).unwrap_or_default();
                core.window.amend(t, bound, failed, latency);
                if !failed {
                    return;
                }
                core.window.totals(at)
            }
            None => {
                core.window
                    .record(
                        at,
                        Sample {
                            failed,
                            slow,
                            latency,
                        },
                    )
                    .1
            }
        };
        core.judge(self.gen, totals);
    }
}

impl Permit<'_> {
    /// A trial its caller dropped: freed if it was dropped before it was late, judged if the
    /// caller gave up after the slow bound (slow) or the trial timeout (failed), so a
    /// dependency that hangs behind a caller's shorter deadline still reopens the breaker.
    fn abandoned_trial(&self) -> TrialEnd {
        let Some(start) = self.start else {
            return TrialEnd::Released;
        };
        let core = self.core;
        let ran = Instant::now().saturating_duration_since(start);
        if ran >= core.trial_timeout() {
            return TrialEnd::Abandoned(Late::TimedOut);
        }
        match core.config.slow {
            Some(rule) if ran >= rule.bound => {
                bump(&core.counters.slow);
                TrialEnd::Abandoned(Late::Slow)
            }
            _ => TrialEnd::Released,
        }
    }
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
