//! The breaker's slowness, apart from the window: its calls past the slow bound in flight, whether
//! its last call to end was slow (a full bulkhead's refusal counts as slow behind them), the
//! slow bound itself under a rule derived from `timeout` (`usual.rs`), and the episode of an
//! opening on slowness (slow, or a hung outage: how its trials are judged).

use std::time::Duration;

use super::core::Core;
use crate::settings::BreakerConfig;
use crate::sync::atomic::Ordering::Relaxed;

/// The codes of `Core::slow_episode`.
pub(super) mod episode {
    /// Not an episode of slowness (closed, or opened on failures).
    pub(crate) const NONE: u8 = 0;
    /// Opened on slowness; no call admitted before the opening has ended since.
    pub(crate) const UNSEEN: u8 = 1;
    /// Opened on slowness, and a call of it answered: the dependency answers, slowly.
    pub(crate) const SLOW: u8 = 2;
    /// Opened on slowness, and the first call of it to end timed out or failed: the calls
    /// were only seen slow in flight; the dependency was down (a hung outage). Trials as
    /// after failures, relapses from the ramp included.
    pub(crate) const DOWN: u8 = 3;
}

impl Core {
    /// A call in flight went past the slow bound.
    pub(super) fn slow_in_flight_added(&self) {
        self.slow_in_flight.fetch_add(1, Relaxed);
    }

    /// A call marked slow in flight ended.
    pub(super) fn slow_in_flight_ended(&self) {
        self.slow_in_flight.fetch_sub(1, Relaxed);
    }

    /// The slow bound of a normal call starting now under settings `c`: the rule's, or under a
    /// rule derived from `timeout`, five times the dependency's usual latency when that is
    /// shorter (`usual.rs`). `None`: no slow rule.
    pub(crate) fn slow_bound(&self, c: &BreakerConfig) -> Option<Duration> {
        let bound = c.slow()?.bound;
        Some(if c.settings().slow_rule_derived() {
            self.usual.bound(bound)
        } else {
            bound
        })
    }

    /// The dependency's usual latency, once learned, under a slow rule derived from `timeout`
    /// (`usual.rs`; `None` under any other rule): metrics show it, the stuck alert names it.
    pub(crate) fn usual_latency(&self) -> Option<Duration> {
        if !self.config().settings().slow_rule_derived() {
            return None;
        }
        self.usual.latency()
    }

    /// Whether the breaker opened on slowness alone and has not closed (nor ended a ramp) since.
    pub(crate) fn slow_episode(&self) -> bool {
        matches!(
            self.slow_episode.load(Relaxed),
            episode::UNSEEN | episode::SLOW
        )
    }

    /// A call admitted before the breaker opened ended during the episode (derived settings,
    /// whose trials pass by answering after failures). An opening on slowness that no call
    /// of it has ended yet is decided by the first to end: answered, the dependency is slow
    /// (trials judged by the slow bound, seed 002); timed out or failed, it is down, and the
    /// calls were only seen slow in flight before their timeout: trials get the long timeout
    /// a provider back cold needs (seed 000). A hung outage opens on slowness (calls are seen
    /// slow at half the timeout, before they time out), and its trials were cut at the call's
    /// timeout: a provider back cold never passed one.
    pub(crate) fn episode_call_ended(&self, answered: bool) {
        let to = if answered {
            episode::SLOW
        } else {
            episode::DOWN
        };
        let _ = self
            .slow_episode
            .compare_exchange(episode::UNSEEN, to, Relaxed, Relaxed);
    }

    /// This breaker's last call to end was slow or not (derived slow rule only). Written
    /// only when it changes, so calls of a steady dependency only read it.
    pub(super) fn ended_slow(&self, slow: bool) {
        if self.ended_slow.load(Relaxed) != slow {
            self.ended_slow.store(slow, Relaxed);
        }
    }

    /// Whether a full bulkhead of `pool` slots refuses because of this breaker's slowness:
    /// every slot holds one of its calls already past the slow bound, or its last call to
    /// end was slow. The second covers the second after slow calls time out: their slots go
    /// to fresh calls not yet past the bound, and the refusals then stopped counting, so
    /// behind a pool of 5 the timeout alone opened at 2 s or a second later depending on a
    /// few calls (3.1 s at 45 calls a second; issue 26's real run).
    pub(crate) fn full_behind_slow(&self, pool: usize) -> bool {
        u64::from(self.slow_in_flight.load(Relaxed)) >= pool as u64 || self.ended_slow.load(Relaxed)
    }
}
