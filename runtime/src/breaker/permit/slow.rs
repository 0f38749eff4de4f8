//! The slow-in-flight ticket: a call still running past the slow bound counts as slow at once,
//! with a sample at the bound that its end amends (or, if it is ignored, withdraws), and a
//! refusal behind slow calls is such a sample too (issue 26).

use std::time::Duration;

use super::Permit;
use crate::breaker::core::bump;
use crate::window::{Sample, Ticket};

impl Permit<'_> {
    /// The slow bound of a normal call: a sample marked slow in flight takes it as its latency.
    /// Fixed when the call's timing started, so its in-flight sample is amended with the bound
    /// it was recorded at, however the learned one moved since (`usual.rs`).
    pub(super) fn slow_bound(&self) -> Duration {
        if self.start.is_some() {
            return self.slow_at;
        }
        self.sample_bound().unwrap_or_default()
    }

    /// A call still running past the slow bound counts as slow now, so a dependency that
    /// hangs trips the breaker before its calls time out, and a half-open window that ends
    /// while trials hang is judged with them (a trial's bound is the trial bound).
    pub(super) fn mark_slow_in_flight(&mut self) {
        let core = self.core;
        bump(&core.counters.slow);
        self.counted_slow = true;
        core.slow_in_flight_added();
        if self.trial {
            core.mark_trial_slow(self.gen);
        } else if self.is_current() {
            self.slow_ticket = Some(self.record_slow_at_bound());
        }
    }

    /// An ignored call takes no place in the window: the sample it left there when it was
    /// marked slow in flight is taken out (its lifetime `slow` count stays: it was slow).
    pub(super) fn withdraw_slow_sample(&mut self) {
        if let Some(t) = self.slow_ticket.take() {
            if self.is_current() {
                self.window().withdraw(t, self.slow_bound());
            }
        }
    }

    /// A slow sample at the slow bound, judged: a call marked slow in flight, or a refusal
    /// behind slow calls. Where it went, for the call's end to amend.
    pub(super) fn record_slow_at_bound(&self) -> Ticket {
        let core = self.core;
        let sample = Sample {
            failed: false,
            slow: true,
            latency: self.slow_bound(),
        };
        let (ticket, totals) = self.window().record(|| core.clock().now(), sample);
        if let Some(t) = totals {
            self.judge(t);
        }
        ticket
    }
}
