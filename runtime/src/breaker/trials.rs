//! Half-open on the breaker's side: the rule trials are judged by, a trial's end, the verdict's
//! transition, and the timeout a trial runs under. The episode's own bookkeeping (who becomes a
//! trial, when a verdict is due) is `half_open.rs`'s.

use std::time::Duration;

use super::core::{Core, Rare};
use super::events::{Reason, Transition};
use super::half_open::{Rule, TrialEnd, Verdict};
use crate::settings::HalfOpenPolicy;
use crate::state::{State, Word};
use crate::sync::lock;

impl Core {
    /// What half-open judges its trials by: the breaker's whole rule.
    pub(super) fn trial_rule(&self) -> Rule {
        Rule {
            policy: self.config().half_open(),
            failure_rate: self.config().failure_rate(),
            slow: self.config().slow(),
            calls_wait: crate::clock::nanos(self.calls_wait()),
        }
    }

    /// How long a half-open with `half_open_calls` waits for its trials before it reopens:
    /// the default half-open window (`defaults::HALF_OPEN_WINDOW`, 30 s), or the trial
    /// timeout if longer, so that a trial admitted first is given its whole timeout. Checked
    /// when a caller asks for admission (or a trial ends): the first caller past it is refused.
    pub(crate) fn calls_wait(&self) -> Duration {
        fusebox_settings::defaults::HALF_OPEN_WINDOW.max(self.trial_timeout())
    }

    /// A trial ended: record it and judge when due.
    pub(crate) fn finish_trial(&self, gen: u64, result: TrialEnd) {
        let now = self.clock.now();
        let mut rare = lock(&self.rare);
        let cur = self.word();
        if cur.generation() != gen || cur.state() != State::HalfOpen {
            return;
        }
        match result {
            TrialEnd::Released => rare.trials.release(),
            TrialEnd::Judged(r) => rare.trials.finish(r),
            TrialEnd::Abandoned(late) => rare.trials.abandoned(late),
        }
        if let Some(v) = rare.trials.verdict(now, self.trial_rule()) {
            let event = self.apply_verdict(&mut rare, cur, v, now);
            drop(rare);
            self.events.emit(event);
        }
    }

    pub(super) fn apply_verdict(
        &self,
        rare: &mut Rare,
        cur: Word,
        v: Verdict,
        now: u64,
    ) -> Transition {
        let (ok, failed) = (rare.trials.ok, rare.trials.failed);
        match v {
            Verdict::Close => self.switch(
                rare,
                cur,
                State::Closed,
                Reason::TrialsPassed { ok, failed },
                now,
            ),
            Verdict::Reopen => self.switch(
                rare,
                cur,
                State::Open,
                Reason::TrialsFailed { ok, failed },
                now,
            ),
        }
    }

    /// The timeout of a trial: the configured one, or else the half-open sampling period,
    /// so that a hung trial can never hold a breaker in half-open forever.
    pub(crate) fn trial_timeout(&self) -> Duration {
        self.config
            .half_open_timeout()
            .unwrap_or(match self.config().half_open() {
                HalfOpenPolicy::Share { window, .. } => window,
                HalfOpenPolicy::Calls(_) => self.config().open_for(),
            })
    }
}
