//! Half-open, on the breaker's side: admission while half-open, the rule trials are judged by,
//! a trial's end, the verdict's transition, and the timeout a trial runs under. The episode's
//! own bookkeeping (who becomes a trial, when a verdict is due) is `episode.rs`'s.
//!
//! Invariants: everything here runs under `rare`'s lock, and checks that the word is still the
//! half-open generation it judges; the episode began when the state did (`Core::state_since`),
//! so it keeps no start time of its own.

mod episode;

use std::time::Duration;

pub(crate) use episode::{Episode, Late, Rule, TrialEnd, TrialResult, Verdict};

use super::core::{Admission, Core, Rare};
use super::events::{Pending, Reason};
use crate::error::Rejection;
use crate::settings::{BreakerConfig, HalfOpenPolicy};
use crate::state::{State, Word};
use crate::sync::lock;

impl Core {
    /// Admission while half-open: a verdict that is due first (then `None`: the word moved, so
    /// the caller looks again), else a trial if the episode takes one, else a refusal. `None`
    /// too when the word had already moved on from `w`.
    pub(super) fn admit_half_open(
        &self,
        w: Word,
        now: u64,
    ) -> Option<Result<Admission, Rejection>> {
        self.check_stuck(now);
        let mut rare = lock(&self.rare);
        let cur = self.word();
        if cur != w {
            return None;
        }
        let elapsed = self.in_state_for(now);
        if let Some(v) = rare.episode.verdict(elapsed, self.trial_rule()) {
            let event = self.apply_verdict(&mut rare, cur, v, now);
            drop(rare);
            self.events.emit(event);
            return None;
        }
        if rare.episode.admit(elapsed, self.config().half_open()) {
            return Some(Ok(Admission::Trial(cur.generation())));
        }
        drop(rare);
        Some(Err(self.rejection(State::HalfOpen, None)))
    }

    /// Reopens a half-open with `half_open_calls` that is short of its trials at its bound
    /// without waiting for a caller, so that [`state`] and the metrics report it reopened
    /// (issue 31), as a lapsed forced state ends when looked at. True if the state moved.
    /// A sampled half-open is still judged by the next caller, or trial, after its window.
    ///
    /// [`state`]: crate::breaker::Breaker::state
    pub(crate) fn judge_due(&self, w: Word, now: u64) -> bool {
        if w.state() != State::HalfOpen {
            return false;
        }
        let mut rare = lock(&self.rare);
        let Some(v) = self.verdict_due(&rare, w, now) else {
            return false;
        };
        let event = self.apply_verdict(&mut rare, w, v, now);
        drop(rare);
        self.events.emit(event);
        true
    }

    /// Under `rare`'s lock: the verdict due at `now` on the half-open word `w`: with
    /// `half_open_calls`, short of its trials at the bound or judged; with a share, its window
    /// over with trials to judge. `None` when the word moved on or none is due. A verdict that
    /// time alone made due is applied by `Breaker::state` and reported by the metrics, so a
    /// half-open whose trials passed reads closed (and is never `stuck`) through a lull.
    pub(super) fn verdict_due(&self, rare: &Rare, w: Word, now: u64) -> Option<Verdict> {
        if w.state() != State::HalfOpen || self.word() != w {
            return None;
        }
        rare.episode
            .verdict(self.in_state_for(now), self.trial_rule())
    }

    /// What half-open judges its trials by: the breaker's whole rule.
    pub(super) fn trial_rule(&self) -> Rule {
        let c = self.config();
        Rule {
            policy: c.half_open(),
            failure_rate: c.failure_rate(),
            slow: c.slow(),
            calls_wait: crate::clock::nanos(self.calls_wait()),
            trial_bound: self.trial_slow_bound(&c).map(crate::clock::nanos),
        }
    }

    /// How long a half-open with `half_open_calls` waits for its trials before it reopens:
    /// the default half-open window (`defaults::HALF_OPEN_WINDOW`, 30 s), or the trial
    /// timeout if one is set and longer, so that a trial admitted first is given its whole
    /// timeout. Checked when a caller asks for admission (or a trial ends): the first caller
    /// past it is refused.
    pub(crate) fn calls_wait(&self) -> Duration {
        let c = self.config();
        let trial = c.half_open_timeout().unwrap_or_default();
        fusebox_settings::defaults::HALF_OPEN_WINDOW.max(trial)
    }

    /// A trial still in flight went past the trial slow bound: from now on it counts as a slow
    /// answered trial (`Episode::marked`), and is judged at once if that decides.
    pub(crate) fn mark_trial_slow(&self, gen: u64) {
        self.with_episode(gen, |episode| episode.mark_slow());
    }

    /// A trial ended (`marked`: it had been marked slow in flight): record it and judge when due.
    pub(crate) fn finish_trial(&self, gen: u64, result: TrialEnd, marked: bool) {
        self.with_episode(gen, |episode| {
            if marked {
                episode.unmark();
            }
            match result {
                TrialEnd::Released => episode.release(),
                TrialEnd::Judged(r) => episode.finish(r),
                TrialEnd::Abandoned(late) => episode.abandoned(late),
            }
        });
    }

    /// Changes the episode of half-open generation `gen` (nothing once the word moved on), then
    /// applies the verdict if one is due.
    fn with_episode(&self, gen: u64, change: impl FnOnce(&mut Episode)) {
        let now = self.clock().now();
        let mut rare = lock(&self.rare);
        let cur = self.word();
        if cur.generation() != gen || cur.state() != State::HalfOpen {
            return;
        }
        change(&mut rare.episode);
        if let Some(v) = rare
            .episode
            .verdict(self.in_state_for(now), self.trial_rule())
        {
            let event = self.apply_verdict(&mut rare, cur, v, now);
            drop(rare);
            self.events.emit(event);
        }
    }

    /// The verdict's transition, under the lock; the caller emits it after releasing it.
    pub(super) fn apply_verdict(
        &self,
        rare: &mut Rare,
        cur: Word,
        v: Verdict,
        now: u64,
    ) -> Pending {
        let (ok, failed) = (rare.episode.ok, rare.episode.failed);
        let (to, reason) = match v {
            Verdict::Close => (State::Closed, Reason::TrialsPassed { ok, failed }),
            Verdict::Reopen => (State::Open, Reason::TrialsFailed { ok, failed }),
        };
        self.transition_locked(rare, cur, to, reason, now)
    }
}

impl Core {
    /// The latency at which a trial or probe under settings `c` counts as slow: the settings'
    /// trial bound (`half_open_slow`, else the slow rule's), except that trials that pass by
    /// answering (a `half_open_slow` derived from `timeout`, for a provider that warms by
    /// serving) are judged by the slow rule's bound after an opening on slowness alone: that
    /// dependency was answering, only slowly, and would pass every trial while as slow
    /// (`Core::slow_episode`: not once the opening's first call to end timed out).
    pub(crate) fn trial_slow_bound(&self, c: &BreakerConfig) -> Option<Duration> {
        let s = c.settings();
        if s.trials_pass_by_answering() && self.slow_episode() {
            return self.slow_bound(c);
        }
        s.half_open_slow()
    }

    /// The timeout of a trial or probe under settings `c`: the settings' (`trial_timeout_of`),
    /// except where trials are held to the slow rule's bound after an opening on slowness
    /// (`trial_slow_bound`): one past twice that bound is slow whatever it answers, so it is
    /// cut there, or at the call's `timeout` if longer, rather than keep its caller waiting
    /// for the long trial timeout meant for a provider back cold after failures.
    pub(crate) fn trial_timeout_under(&self, c: &BreakerConfig) -> Duration {
        let t = trial_timeout_of(c);
        match self.slow_bound(c) {
            // Never longer than the settings' own trial timeout (one given stays the bound).
            Some(b) if c.settings().trials_pass_by_answering() && self.slow_episode() => {
                t.min(b.saturating_mul(2).max(c.timeout().unwrap_or_default()))
            }
            _ => t,
        }
    }
}

/// The timeout of a trial or probe under settings `c`: the configured one (`half_open_timeout`,
/// else `timeout`). A trial's permit asks with the settings that admitted it, so a live change
/// does not move the timeout of a trial in flight.
///
/// With neither set, a trial or probe is cut at the half-open window (with a share) or at
/// `open_for` (with `half_open_calls`), and its caller gets `Rejection::TimedOut`: a trial that
/// hangs can never hold a breaker half-open, and a sample whose every trial hangs still ends.
pub(crate) fn trial_timeout_of(c: &BreakerConfig) -> Duration {
    c.half_open_timeout().unwrap_or(match c.half_open() {
        HalfOpenPolicy::Share { window, .. } => window,
        HalfOpenPolicy::Calls(_) => c.open_for(),
    })
}
