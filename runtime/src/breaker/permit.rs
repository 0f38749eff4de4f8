//! A call's admission ticket: it measures the call, enforces the timeouts, and records the
//! outcome exactly once, in `finish` or, if the call is dropped or panics, in `Drop`.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use tokio::time::{sleep_until, Instant};

use super::core::{bump, Admission, Core};
use super::half_open::TrialResult;
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
            done: false,
        }
    }

    fn timeout(&self) -> Option<Duration> {
        if self.trial {
            Some(self.core.trial_timeout())
        } else {
            self.core.config.timeout()
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
        // Trials run to completion under `half_open_timeout` (they are what warms a cold
        // dependency), so none is marked slow in flight; its latency is judged when it ends.
        let slow = if self.trial {
            None
        } else {
            self.core.config.slow().map(|r| r.bound)
        };
        let slow = slow
            .filter(within)
            .filter(|s| timeout.is_none_or(|t| *s < t));
        if slow.is_none() && timeout.is_none() {
            return Ok(fut.await);
        }
        let mut fut = pin!(fut);
        let first = start + slow.or(timeout).unwrap_or_default();
        let mut timer = pin!(sleep_until(first));
        let mut watching_slow = slow.is_some();
        let mut timer_live = true;
        poll_fn(|cx| {
            if let Poll::Ready(v) = fut.as_mut().poll(cx) {
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

    /// A call still running past the slow bound counts as slow now, so a dependency that
    /// hangs trips the breaker before its calls time out.
    fn mark_slow_in_flight(&mut self) {
        let core = self.core;
        bump(&core.counters.slow);
        self.counted_slow = true;
        if !self.is_current() {
            return;
        }
        let bound = core.config.slow().map(|r| r.bound).unwrap_or_default();
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
            let ran = !matches!(outcome, Outcome::Cancelled | Outcome::BulkheadFull);
            let result = ran.then(|| {
                // Slow by the trial bound (`half_open_slow`, else the slow rule's), as closed
                // judges by its own: a timed-out trial is slow too.
                let latency = self.start.map(|s| s.elapsed()).unwrap_or_default();
                let slow = outcome == Outcome::TimedOut
                    || core.config.half_open_slow().is_some_and(|b| latency >= b);
                if slow {
                    bump(&c.slow);
                }
                TrialResult {
                    failed: outcome.failed(),
                    slow,
                }
            });
            core.finish_trial(self.gen, result);
            return;
        }
        if matches!(outcome, Outcome::Cancelled | Outcome::BulkheadFull) {
            return;
        }
        let now = Instant::now();
        let latency = self.start.map(|s| now - s).unwrap_or_default();
        let slow =
            outcome == Outcome::TimedOut || core.config.slow().is_some_and(|r| latency >= r.bound);
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
                let bound = core.config.slow().map(|r| r.bound).unwrap_or_default();
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

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if !self.done {
            // Dropped mid-call: cancelled, unless we are unwinding from the call's panic.
            let outcome = if std::thread::panicking() {
                Outcome::Panicked
            } else {
                Outcome::Cancelled
            };
            self.record(outcome);
        }
    }
}
