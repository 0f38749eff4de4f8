//! Synchronous access to the core for the loom model checker (`--cfg loom` only, not an API).
//!
//! Admission and recording are synchronous; only `Permit::drive` needs a runtime. These hooks
//! let a loom thread admit a call, hold it, and end it, without tokio.

use crate::breaker::core::Admission;
use crate::breaker::events::Reason;
use crate::breaker::permit::{Outcome, Permit};
use crate::breaker::Breaker;
use crate::bulkhead::{Bulkhead, BulkheadPermit};
use crate::error::Rejection;
use crate::state::State;
use crate::window::{self, Sample};

/// An admitted call; dropping it cancels it.
pub struct Call<'a> {
    permit: Permit<'a>,
    trial: bool,
}

/// Asks `b` to admit one call.
pub fn admit(b: &Breaker) -> Result<Call<'_>, Rejection> {
    // The live mark taken and the layer held, as the call path does.
    let (a, live) = b.0.admit()?.take_live();
    let trial = matches!(a, Admission::Trial(_) | Admission::Probe(_));
    let layer = if live { b.0.live.get() } else { None };
    Ok(Call {
        permit: Permit::under(&b.0, a, layer),
        trial,
    })
}

impl Call<'_> {
    /// True for a half-open trial or a probe while open (both run as trials).
    pub fn is_trial(&self) -> bool {
        self.trial
    }
    /// Ends the call with `Ok`.
    pub fn succeed(self) {
        self.permit.finish(Outcome::Success);
    }
    /// Ends the call with a counted `Err`.
    pub fn fail(self) {
        self.permit.finish(Outcome::Failure);
    }
}

/// The generation of the state word: bumped once per transition.
pub fn generation(b: &Breaker) -> u64 {
    b.0.word().generation()
}

/// Moves an open breaker to half-open as if its open period had elapsed.
pub fn half_open(b: &Breaker) {
    let now = b.0.clock().now();
    let w = b.0.word();
    assert_eq!(w.state(), State::Open, "half_open() needs an open breaker");
    b.0.transition(Some(w), State::HalfOpen, Reason::OpenElapsed, now);
}

/// A bulkhead slot without waiting (the fail-fast path).
pub fn try_acquire(b: &Bulkhead) -> Option<BulkheadPermit<'_>> {
    b.try_acquire_now()
}

/// A bare count window.
pub struct CountWindow(window::CountWindow);

impl CountWindow {
    /// The last `n` calls.
    pub fn new(n: usize) -> CountWindow {
        CountWindow(window::CountWindow::new(n))
    }
    /// Records one call.
    pub fn record(&self, failed: bool, slow: bool) {
        let latency = std::time::Duration::from_millis(if slow { 900 } else { 1 });
        self.0.record(Sample {
            failed,
            slow,
            latency,
        });
    }
    /// Empties the window.
    pub fn reset(&self) {
        self.0.reset();
    }
    /// Running totals `(calls, failures, slow)`.
    pub fn totals(&self) -> (u64, u64, u64) {
        let t = self.0.totals();
        (t.calls, t.failures, t.slow)
    }
    /// The same figures counted from the ring's entries.
    pub fn contents(&self) -> (u64, u64, u64) {
        self.0.contents()
    }
}

/// A bare time window of ten slots; times are nanoseconds given by the caller.
pub struct TimeWindow(window::TimeWindow);

impl TimeWindow {
    /// A window of `nanos`, starting at time 0.
    pub fn new(nanos: u64) -> TimeWindow {
        let w = window::TimeWindow::new(std::time::Duration::from_nanos(nanos));
        w.start_at(0);
        TimeWindow(w)
    }
    /// Records one call at `now`.
    pub fn record(&self, now: u64, failed: bool) {
        self.0.record(
            now,
            Sample {
                failed,
                slow: false,
                latency: std::time::Duration::from_millis(1),
            },
        );
    }
    /// Running totals `(calls, failures)` at `now`.
    pub fn totals(&self, now: u64) -> (u64, u64) {
        let t = self.0.totals(now);
        (t.calls, t.failures)
    }
    /// The same figures summed over the slots.
    pub fn contents(&self) -> (u64, u64) {
        self.0.contents()
    }
}

/// A fresh registry for one model run: the process-wide one would keep loom objects of an
/// earlier run.
pub fn registry() -> crate::registry::Registry {
    crate::registry::Registry::for_model()
}
