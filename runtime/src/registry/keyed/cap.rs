//! The family's writers: a new key's breaker within `max_keys`, the sweep for idle breakers
//! that makes room at the cap, the shared overflow breaker past it, and a key's removal. All
//! under the family's `writer` lock, which no lookup takes (see the module's header).

use std::sync::Arc;

use super::{Family, Found, Shard};
use crate::breaker::events::Events;
use crate::breaker::Breaker;
use crate::clock::Clock;
use crate::registry::key_name::OVERFLOW_KEY;
use crate::settings::BreakerConfig;
use crate::sync::atomic::Ordering::{Relaxed, Release};
use crate::sync::lock;

pub(super) struct Writer {
    /// New keys to turn away before the next sweep for idle breakers.
    sweep_after: usize,
    /// When the last sweep ran (the clock's nanoseconds): another is due after [`SWEEP_EVERY`]
    /// whatever `sweep_after` says, since keys go idle as time passes, not as keys arrive.
    swept_at: u64,
}

impl Writer {
    pub(super) fn new() -> Writer {
        Writer {
            sweep_after: 0,
            swept_at: 0,
        }
    }

    /// Whether a sweep is due at `now`.
    fn due(&self, now: u64) -> bool {
        self.sweep_after == 0 || now.saturating_sub(self.swept_at) >= SWEEP_EVERY.as_nanos() as u64
    }
}

/// The longest a family at its cap goes without looking for idle keys while new keys arrive.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

impl Family {
    /// The key's breaker, made from `config` (already named `base/key`) if new, or the shared
    /// overflow breaker when the family is full. Breakers are made and dropped outside the
    /// writer lock; only the shard's copy is made under it, and no lookup waits for that.
    pub(crate) fn insert(&self, hash: u64, config: BreakerConfig, events: &Events) -> Breaker {
        if !config.same_settings(&self.first) {
            // Before the breaker is published: a lookup that finds it then sees `mixed`.
            self.mixed.store(true, Release);
        }
        let key = config.key().unwrap_or_default();
        let swept = {
            let mut w = lock(&self.writer);
            if let Found::Own(b) = self.get(hash, key) {
                return b; // another thread made it first
            }
            // The clock is read only at the cap, never on a lookup.
            let now = (self.len() >= self.max_keys).then(|| Clock::new().now());
            let swept = if let Some(now) = now.filter(|n| w.due(*n)) {
                w.sweep_after = self.max_keys;
                w.swept_at = now;
                self.sweep_idle()
            } else {
                if self.len() >= self.max_keys {
                    w.sweep_after -= 1;
                }
                Vec::new()
            };
            if self.len() >= self.max_keys {
                drop(w);
                drop(swept);
                return self.overflowed(&config, events);
            }
            swept
        };
        drop(swept);
        let fresh = Breaker::with_events(config, events.clone());
        let w = lock(&self.writer);
        let key = fresh.config().key().unwrap_or_default();
        if let Found::Own(b) = self.get(hash, key) {
            drop(w);
            return b;
        }
        if self.len() >= self.max_keys {
            drop(w);
            return self.overflowed(fresh.config(), events);
        }
        let swap = self.shard(hash);
        let old = swap.load().clone();
        swap.store(Arc::new(old.with(hash, key, fresh.clone())));
        self.len.fetch_add(1, Relaxed);
        drop(w);
        drop(old);
        fresh
    }

    /// Removes every idle breaker (closed, nothing in its window); returns them, to be dropped
    /// by the caller. Called with the writer lock held.
    fn sweep_idle(&self) -> Vec<Arc<Shard>> {
        let mut old = Vec::new();
        for swap in self.shards.iter() {
            let cur = swap.load().clone();
            let Some((copy, removed)) = cur.without_any(is_idle) else {
                continue;
            };
            swap.store(Arc::new(copy));
            self.next_generation();
            self.len.fetch_sub(removed, Relaxed);
            self.evicted.fetch_add(removed as u64, Relaxed);
            old.push(cur);
        }
        old
    }

    fn overflowed(&self, wanted: &BreakerConfig, events: &Events) -> Breaker {
        let before = self.overflowed.fetch_add(1, Relaxed);
        let b = self
            .overflow
            .get_or_init(|| Breaker::with_events(wanted.with_key(OVERFLOW_KEY), events.clone()))
            .clone();
        if before == 0 || before.is_power_of_two() {
            tracing::error!(
                breaker = %self.base,
                max_keys = self.max_keys,
                key = wanted.key().unwrap_or_default(),
                overflowed = before + 1,
                "keyed breaker is at max_keys; new keys share {} \
                 (raise max_keys, or key by something with fewer values)",
                b.name()
            );
        }
        b
    }

    /// Removes one key's breaker; true if it had one.
    pub(crate) fn remove(&self, key: &str) -> bool {
        let hash = self.hash(key);
        let w = lock(&self.writer);
        let swap = self.shard(hash);
        let cur = swap.load().clone();
        let Some(copy) = cur.without(hash, key, |k| self.hash(k)) else {
            return false;
        };
        swap.store(Arc::new(copy));
        self.next_generation();
        self.len.fetch_sub(1, Relaxed);
        self.evicted.fetch_add(1, Relaxed);
        drop(w);
        drop(cur);
        true
    }
}

/// Idle: closed (not forced) with an empty window, so dropping it loses nothing a fresh
/// breaker would not also know.
fn is_idle(b: &Breaker) -> bool {
    let core = &b.0;
    // A ramp whose time is up is over, even if no call came since to end it.
    core.settle_ramp(core.clock().now());
    // Plain closed, live settings or not (`live.rs`): a key overridden by a pattern is evicted too.
    let w = core.word();
    w.state() == crate::state::State::Closed
        && !w.ramping()
        && core.with_window(|win| win.totals(core.clock().now()).calls) == 0
}
