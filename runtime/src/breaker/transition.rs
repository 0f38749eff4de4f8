//! Transitions of the state machine: the one place a breaker changes state. `transition`
//! takes `rare`'s lock and checks the word is still the state the caller judged;
//! `transition_locked` is the same for a caller already holding it; `enter` writes the fields
//! of the state being entered (each state's own, before the word turns), and `publish` turns
//! the word (Release) and stamps `state_since`. The caller emits the returned `Transition`
//! once the lock is released (`core.rs` gives the invariants).

use super::core::{bump, Core, Rare};
use super::events::{Pending, Reason, Transition};
use super::half_open::Episode;
use super::slowness::episode;
use crate::clock::nanos;
use crate::settings::WindowKind;
use crate::state::{State, Word};
use crate::sync::atomic::Ordering::*;
use crate::sync::lock;

impl Core {
    /// Takes the lock and moves to `to` if the word is still `expected`'s state and generation
    /// (or unconditionally for `None`); emits the transition once the lock is released.
    pub(crate) fn transition(
        &self,
        expected: Option<Word>,
        to: State,
        reason: Reason,
        now: u64,
    ) -> bool {
        let mut rare = lock(&self.rare);
        let cur = self.word();
        if expected.is_some_and(|e| !e.same_state(cur)) {
            return false;
        }
        let event = self.transition_locked(&mut rare, cur, to, reason, now);
        drop(rare);
        self.events.emit(event);
        true
    }

    /// Performs a transition under the lock the caller holds (`rare` is its guard's); the
    /// caller emits the returned event after releasing it.
    pub(super) fn transition_locked(
        &self,
        rare: &mut Rare,
        cur: Word,
        to: State,
        reason: Reason,
        now: u64,
    ) -> Pending {
        rare.moved_on = super::stuck::this_thread();
        let next = self.enter(rare, cur, to, &reason, now);
        self.publish(cur, next, reason, now)
    }

    /// Writes the fields of the state being entered (each state's own, before the word turns)
    /// and returns the word to publish. Under the lock.
    pub(super) fn enter(
        &self,
        rare: &mut Rare,
        cur: Word,
        to: State,
        reason: &Reason,
        now: u64,
    ) -> Word {
        // Trials passed and a ramp is set: closed, ramping (`ramp.rs`).
        let ramps = to == State::Closed
            && matches!(reason, Reason::TrialsPassed { .. })
            && self.config().ramp().is_some();
        match to {
            State::Open => {
                let goes_on = cur.ramping() || self.relapses(rare, cur, reason, now);
                if cur.state() == State::Closed && !goes_on {
                    // A new episode: the last one's growth is forgotten.
                    rare.opened_in_a_row = 0;
                }
                let period = self.config().open_period(u32::from(rare.opened_in_a_row));
                rare.opened_in_a_row = rare.opened_in_a_row.saturating_add(1);
                self.enter_open(period, now);
                bump(&self.counters.times_opened);
                self.stuck.begin_unless_unhealthy(now);
                // Trials that fail keep the episode what its opening made it, and so does a
                // relapse while ramping back in (or, where the ramp warms, soon after it):
                // a provider back from an outage answers slowly while cold and warms only by
                // serving (seed 000), so an episode that began with failures keeps trials
                // that pass by answering; one that began on slowness keeps judging them by
                // the slow bound.
                match reason {
                    // A hung outage's episode (`DOWN`) relapsing from its ramp stays one: a
                    // provider back cold that needs more than a ramp's traffic to warm relapses
                    // as it does after refusing, and answers past the timeout look the same.
                    _ if goes_on => {}
                    Reason::SlowRate { .. } => self.slow_episode.store(episode::UNSEEN, Relaxed),
                    Reason::FailureRate { .. } | Reason::Quorum { .. } => {
                        self.slow_episode.store(episode::NONE, Relaxed)
                    }
                    _ => {}
                }
            }
            State::HalfOpen => rare.episode = Episode::default(),
            State::Closed => {
                self.with_window(|w| w.reset(now));
                if ramps {
                    self.start_ramp();
                } else {
                    rare.opened_in_a_row = 0;
                }
                self.stuck.end();
                if !ramps {
                    // Kept through a ramp (see `Open` above); the ramp's end clears it.
                    self.slow_episode.store(episode::NONE, Relaxed);
                }
            }
            // A forced state is an operator's override: held past `alert_after` it is stuck too,
            // counted from the moment it was forced.
            State::ForcedClosed | State::ForcedOpen => self.stuck.begin(now),
        }
        if *reason == Reason::Reset {
            rare.opened_in_a_row = 0;
            self.slow_episode.store(episode::NONE, Relaxed);
            // An operator's reset also forgets the usual latency: a dependency that became
            // slower for good is learned anew rather than held open by what it used to be.
            self.usual.forget();
        }
        if ramps {
            cur.next_ramping()
        } else {
            cur.next(to)
        }
    }

    /// Turns the word to `next` (the state's fields were written by [`enter`](Self::enter))
    /// and returns the transition to emit, in its place in the registry's order.
    pub(super) fn publish(&self, cur: Word, next: Word, reason: Reason, now: u64) -> Pending {
        self.state_since.store(now, Relaxed);
        self.word.store(next.0, Release);
        self.events.pending(Transition {
            name: self.code_config().name.clone(),
            from: cur.state(),
            to: next.state(),
            at: self.clock().instant(now),
            reason,
        })
    }
}

/// The share of slow calls (percent) since a warming ramp's end above which an opening on
/// slowness is still that ramp's relapse (`Core::relapses`): all of them but a tenth.
const RELAPSE_SLOW_SHARE: f64 = 90.0;

impl Core {
    /// Whether an opening from plain closed is the last episode's relapse: under settings
    /// whose ramp warms the dependency (`Core::warms`), the window started anew as the ramp
    /// ended, and the calls after it had not yet filled it (fewer than a count window's
    /// calls; less than a time window's length since the ramp's end). A provider that needed
    /// more requests than the ramp sent relapses within that window; judged a new episode on
    /// slowness, its trials and probes would be held to its usual latency, which it reaches
    /// only by serving the traffic they keep from it.
    ///
    /// On slowness, only when nearly every call since the ramp was slow
    /// ([`RELAPSE_SLOW_SHARE`]): a provider still cold answers none of them in its usual time,
    /// while one that came back well and then turned slow answered the first ones well; that
    /// is a new slowness, judged by the slow bound, or full load would be let back onto it
    /// again and again (a review: ten times in two minutes).
    fn relapses(&self, rare: &Rare, cur: Word, reason: &Reason, now: u64) -> bool {
        let c = self.config();
        if cur.state() != State::Closed
            || rare.opened_in_a_row == 0
            || !c.settings().trials_pass_by_answering()
        {
            return false;
        }
        if matches!(reason, Reason::SlowRate { rate, .. } if *rate < RELAPSE_SLOW_SHARE) {
            return false;
        }
        match (c.window(), reason) {
            (
                WindowKind::Calls(n),
                Reason::FailureRate { calls, .. } | Reason::SlowRate { calls, .. },
            ) => *calls < u64::from(n),
            (WindowKind::Time(len), _) => {
                let ramp_end = self.state_since().saturating_add(c.ramp().map_or(0, nanos));
                now < ramp_end.saturating_add(nanos(len))
            }
            _ => false,
        }
    }
}
