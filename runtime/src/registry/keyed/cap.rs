//! The family's writers: a new key's breaker within `max_keys`, the sweep for idle breakers
//! that makes room at the cap, the shared overflow breaker past it, and a key's removal. All
//! under the family's `writer` lock, which no lookup takes (see the module's header).
//!
//! Idle is either of two things, and never with calls still waiting (a hung key's calls must
//! end on a breaker that is listed, to be seen). *Empty*: closed, not ramping, nothing in its window, so
//! dropping it loses nothing a fresh breaker would not know. *Quiet*: no call for [`QUIET`],
//! and not holding callers back (not forced, not in an open period): a count window never
//! empties, and an open breaker nobody calls never leaves `Open`, so with the first rule
//! alone such keys kept their slots for good and every new key went to the shared overflow
//! breaker, where one failing key refuses the others. Quiet is read without a clock on a
//! call's path: an open breaker's period ended that long ago (a call since would have turned
//! it half-open); a count window's lifetime call count has not moved for that long, as the
//! writer notes it at each sweep (a time window is quiet when it is empty: no note, so a key
//! costs no more memory).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use super::{Family, Found, Shard};
use crate::breaker::events::Events;
use crate::breaker::Breaker;
use crate::clock::{nanos, Clock};
use crate::registry::key_name::OVERFLOW_KEY;
use crate::settings::{BreakerConfig, WindowKind};
use crate::state::State;
use crate::sync::atomic::Ordering::{Relaxed, Release};
use crate::sync::lock;

pub(super) struct Writer {
    /// New keys to turn away before the next sweep for idle breakers.
    sweep_after: usize,
    /// When the last sweep ran (the clock's nanoseconds): another is due after [`SWEEP_EVERY`]
    /// whatever `sweep_after` says, since keys go idle as time passes, not as keys arrive.
    swept_at: u64,
    /// What was last seen of each count-window key's breaker, by the address of its core (held
    /// by the family while listed here, so never reused): the quiet rule's memory.
    seen: HashMap<usize, Seen>,
}

/// A key's lifetime call count as the writer last saw it, and since when it has been that.
struct Seen {
    calls: u64,
    since: u64,
}

impl Writer {
    pub(super) fn new() -> Writer {
        Writer {
            sweep_after: 0,
            swept_at: 0,
            seen: HashMap::new(),
        }
    }

    /// Whether a sweep is due at `now`.
    fn due(&self, now: u64) -> bool {
        self.sweep_after == 0 || now.saturating_sub(self.swept_at) >= nanos(SWEEP_EVERY)
    }

    /// Whether `b` had no call for [`QUIET`] up to `now` and holds no caller back (the
    /// module's header).
    fn quiet(&mut self, b: &Breaker, now: u64) -> bool {
        let core = &b.0;
        match core.word().state() {
            State::ForcedOpen | State::ForcedClosed => false,
            State::Open => core.open_over_for(now) >= nanos(QUIET),
            State::Closed | State::HalfOpen => {
                matches!(core.config().window(), WindowKind::Calls(_)) && self.unmoved(b, now)
            }
        }
    }

    /// Whether `b`'s lifetime call count has not moved for [`QUIET`]; notes a count that moved.
    fn unmoved(&mut self, b: &Breaker, now: u64) -> bool {
        let calls = b.0.counters.calls();
        let seen = self.seen.entry(id(b)).or_insert(Seen { calls, since: now });
        if seen.calls != calls {
            *seen = Seen { calls, since: now };
            return false;
        }
        now.saturating_sub(seen.since) >= nanos(QUIET)
    }
}

/// The longest a family at its cap goes without looking for idle keys while new keys arrive.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// A key with no call for this long gives its slot up at the cap, whatever its window holds
/// (the default window's length: a time window is empty by then).
const QUIET: Duration = fusebox_settings::defaults::WINDOW;

/// The identity of a key's breaker in [`Writer::seen`].
fn id(b: &Breaker) -> usize {
    Arc::as_ptr(&b.0) as usize
}

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
        // Read for a new key, never on a lookup.
        let now = Clock::new().now();
        let swept = {
            let mut w = lock(&self.writer);
            if let Found::Own(b) = self.get(hash, key) {
                return b; // another thread made it first
            }
            let swept = if self.len() >= self.max_keys && w.due(now) {
                w.sweep_after = self.max_keys;
                w.swept_at = now;
                self.sweep_idle(&mut w, now)
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
        let mut w = lock(&self.writer);
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
        if matches!(fresh.config().window(), WindowKind::Calls(_)) {
            // One call so far: the one that made it (its count moves when it ends).
            let seen = Seen {
                calls: 1,
                since: now,
            };
            w.seen.insert(id(&fresh), seen);
        }
        drop(w);
        drop(old);
        fresh
    }

    /// Removes every idle breaker (empty or quiet: the module's header); returns the shards
    /// they were in, to be dropped by the caller. Called with the writer lock held.
    fn sweep_idle(&self, w: &mut Writer, now: u64) -> Vec<Arc<Shard>> {
        let mut old = Vec::new();
        for swap in self.shards.iter() {
            let cur = swap.load().clone();
            // Every key is looked at (a quiet one's count is noted), then the idle ones go;
            // never one with calls still waiting: hung calls are seen on their own key.
            let idle: HashSet<usize> = cur
                .iter()
                .filter(|b| (w.quiet(b, now) | is_empty(b)) && !b.0.has_waiting_calls())
                .map(id)
                .collect();
            let Some((copy, removed)) = cur.without_any(|b| idle.contains(&id(b))) else {
                continue;
            };
            for gone in &idle {
                w.seen.remove(gone);
            }
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
        // The 1st, 2nd, 4th, 8th... overflow (`before` counts from zero).
        if (before + 1).is_power_of_two() {
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
        let mut w = lock(&self.writer);
        let swap = self.shard(hash);
        let cur = swap.load().clone();
        let Some(copy) = cur.without(hash, key, |k| self.hash(k)) else {
            return false;
        };
        if let Some(b) = cur.get_bytes(hash, key.as_bytes()) {
            w.seen.remove(&id(b));
        }
        swap.store(Arc::new(copy));
        self.next_generation();
        self.len.fetch_sub(1, Relaxed);
        self.evicted.fetch_add(1, Relaxed);
        drop(w);
        drop(cur);
        true
    }
}

/// Empty: closed (not forced) with an empty window, so dropping it loses nothing a fresh
/// breaker would not also know.
fn is_empty(b: &Breaker) -> bool {
    let core = &b.0;
    // A ramp whose time is up is over, even if no call came since to end it.
    core.settle_ramp(core.clock().now());
    // Plain closed, live settings or not (`live.rs`): a key overridden by a pattern is evicted too.
    let w = core.word();
    w.state() == crate::state::State::Closed
        && !w.ramping()
        && core.with_window(|win| win.totals(core.clock().now()).calls) == 0
}
