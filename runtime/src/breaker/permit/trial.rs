//! How a half-open trial's or an open breaker's probe's end is judged: by the trial bound, a
//! dropped trial freed or judged by how late it was.

use super::{Outcome, Permit};
use crate::breaker::core::bump;
use crate::breaker::half_open::{Late, TrialEnd, TrialResult};
use tokio::time::Instant;

impl Permit<'_> {
    /// A trial's or probe's end, as half-open (or the open state) judges it.
    pub(super) fn record_trial(&self, outcome: Outcome) {
        let core = self.core;
        let result = match outcome {
            // An ignored trial tells nothing, nor one a full pool refused (the dependency was
            // not reached): its slot, or its probe, goes to the next caller.
            Outcome::BulkheadFull | Outcome::FullBehindSlow | Outcome::Ignored if self.probe => {
                core.give_back_probe(self.gen);
                return;
            }
            Outcome::BulkheadFull | Outcome::FullBehindSlow | Outcome::Ignored => {
                TrialEnd::Released
            }
            Outcome::Cancelled => self.abandoned_trial(),
            _ => {
                // Slow by the trial bound (`Core::trial_slow_bound`), as closed judges by
                // its own: a timed-out trial is slow too.
                let latency = self.start.map(|s| s.elapsed()).unwrap_or_default();
                let slow = outcome == Outcome::TimedOut
                    || self.counted_slow
                    || core
                        .trial_slow_bound(self.config())
                        .is_some_and(|b| super::past(self.config(), latency, b));
                if slow && !self.counted_slow {
                    bump(&core.counters.slow);
                }
                TrialEnd::Judged(TrialResult {
                    failed: outcome.failed(),
                    slow,
                })
            }
        };
        if self.probe {
            core.finish_probe(self.gen, result);
        } else {
            core.finish_trial(self.gen, result, self.counted_slow);
        }
    }

    /// A trial its caller dropped: freed if it was dropped before it was late, judged if the
    /// caller gave up after the slow bound (slow) or the trial timeout (failed), so a
    /// dependency that hangs behind a caller's shorter deadline still reopens the breaker.
    pub(super) fn abandoned_trial(&self) -> TrialEnd {
        let Some(start) = self.start else {
            return TrialEnd::Released;
        };
        let core = self.core;
        let ran = Instant::now().saturating_duration_since(start);
        let late = if ran >= core.trial_timeout_under(self.config()) {
            Late::TimedOut
        } else if core
            .trial_slow_bound(self.config())
            .is_some_and(|b| super::past(self.config(), ran, b))
        {
            Late::Slow
        } else {
            return TrialEnd::Released;
        };
        // Late either way is slow, as a trial that answered that late would be.
        if !self.counted_slow {
            bump(&core.counters.slow);
        }
        TrialEnd::Abandoned(late)
    }
}
