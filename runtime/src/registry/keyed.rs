//! The breakers of one keyed name (`name/key`): bounded by `max_keys`, found without a lock.
//!
//! - **Lookups never wait.** The keys are spread over [`SHARDS`] shards by a keyed SipHash
//!   (std's `RandomState`: keys come from requests, so the hash must not be predictable; the cap
//!   already bounds a shard, and SipHash keeps a crafted key set from piling into one chain).
//!   Each shard is an immutable map behind a [`Swap`]: a lookup loads it and reads it; a new key
//!   copies its shard (at most `max_keys / SHARDS` entries on average), adds itself and swaps the
//!   copy in. Writers queue on the family's `writer` mutex, which no lookup takes; all
//!   allocation, and every log line, happens outside anything a lookup could wait on.
//! - **The cap never refuses a call.** At `max_keys`, idle breakers (closed, empty window) are
//!   evicted to make room, in one sweep at most once per `max_keys` new keys (so a flood of new
//!   keys costs O(1) each, amortised) or once per [`SWEEP_EVERY`] (so keys that went idle after
//!   a flood make room for the next new key, not only after `max_keys` more); past that, new keys share `name/_overflow`: counted
//!   (`overflowed`) and logged at ERROR on the 1st, 2nd, 4th, 8th... occurrence.
//! - **A call site's `static` template vouches for its settings.** A keyed lookup must check
//!   that the key's breaker has the settings the caller asked for (a conflict is logged and
//!   counted). A family remembers the address of one `&'static` template whose settings are
//!   its first template's (`origin`), and whether any breaker was ever made with other
//!   settings (`mixed`, set before that breaker is published); while not mixed, that template
//!   finds its breakers without comparing settings. Only a `static` can vouch: its address is
//!   never reused, where a template on the stack could be dropped and another built at its
//!   address.
//! - **A removal starts a new generation.** Each thread keeps the keys it used last per call
//!   site (`hot_keys`); every removal of a key (a sweep, `evict`, `evict_keys`) gives the
//!   family a new `generation`, drawn from one process-wide sequence, which those entries check.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::sync::Arc;

use once_cell::sync::OnceCell;

use super::key_name::OVERFLOW_KEY;
use crate::breaker::events::Events;
use crate::breaker::Breaker;
use crate::clock::Clock;
use crate::settings::BreakerConfig;
use crate::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};
use crate::sync::{lock, Mutex, Swap};

/// Keys come from requests: SipHash, seeded per name. Under loom a fixed seed, since the model
/// must take the same path on every run.
#[cfg(not(loom))]
pub(crate) type KeyHasher = std::collections::hash_map::RandomState;
#[cfg(loom)]
pub(crate) type KeyHasher = BuildHasherDefault<std::collections::hash_map::DefaultHasher>;

/// Shards per keyed name: a new key copies one shard, a sixteenth of the keys.
pub(crate) const SHARDS: usize = 16;

/// The shard maps are keyed by the SipHash already computed, so a lookup hashes once.
#[derive(Default)]
pub(crate) struct Prehashed(u64);
impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {}
    fn write_u64(&mut self, h: u64) {
        self.0 = h;
    }
}

/// One shard: breakers by the hash of their key; keys whose 64-bit hash collides with
/// another's go to `collided` by their key.
#[derive(Clone, Default)]
pub(crate) struct Shard {
    by_hash: HashMap<u64, Breaker, BuildHasherDefault<Prehashed>>,
    collided: HashMap<Arc<str>, Breaker, KeyHasher>,
}

impl Shard {
    fn get(&self, hash: u64, key: &str) -> Option<&Breaker> {
        self.get_bytes(hash, key.as_bytes())
    }

    /// [`get`](Self::get) by the key's UTF-8 bytes.
    #[inline]
    fn get_bytes(&self, hash: u64, key: &[u8]) -> Option<&Breaker> {
        match self.by_hash.get(&hash) {
            Some(b) if b.config().key().map(str::as_bytes) == Some(key) => Some(b),
            Some(_) => self.collided.get(std::str::from_utf8(key).ok()?),
            None => None,
        }
    }

    fn iter(&self) -> impl Iterator<Item = &Breaker> {
        self.by_hash.values().chain(self.collided.values())
    }
}

/// What a keyed lookup found.
pub(crate) enum Found {
    /// The key's own breaker.
    Own(Breaker),
    /// None yet.
    Missing,
}

/// The breakers of one keyed name.
pub(crate) struct Family {
    pub(crate) base: Arc<str>,
    /// The template the family was made from: the settings `origin` vouches for.
    first: BreakerConfig,
    /// Address of a `&'static` template with `first`'s settings (0: none yet).
    origin: AtomicUsize,
    /// A breaker was made with settings other than `first`'s: no template vouches any more.
    mixed: AtomicBool,
    max_keys: usize,
    hasher: KeyHasher,
    shards: Box<[Swap<Shard>]>,
    /// Serialises writers (new keys, evictions); lookups never take it.
    writer: Mutex<Writer>,
    len: AtomicUsize,
    overflow: OnceCell<Breaker>,
    pub(crate) overflowed: AtomicU64,
    pub(crate) evicted: AtomicU64,
    /// Removed from its registry (`evict_keys`): a call site that cached it looks it up again.
    retired: AtomicBool,
    /// Changes whenever a key's breaker is removed (see the module's header).
    generation: AtomicU64,
}

/// Where generations come from: unique in the process, so no two families ever share one.
/// A std atomic under loom too: it hands out numbers, and orders nothing.
static GENERATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_generation() -> u64 {
    GENERATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A keyed call site's `static`: its settings template, and the keyed name it found in the
/// process-wide registry, so each call skips the lookup of the name (an `arc-swap` load and a
/// map probe) and goes straight to its key. Only the process-wide registry's is kept (a test
/// scope's registry comes and goes); a family removed by `evict_keys` is looked up again.
#[doc(hidden)]
pub struct KeyedSite {
    pub(crate) template: OnceCell<BreakerConfig>,
    pub(crate) family: OnceCell<Arc<Family>>,
}

impl KeyedSite {
    /// An empty site, for a `static`.
    pub const fn new() -> KeyedSite {
        KeyedSite {
            template: OnceCell::new(),
            family: OnceCell::new(),
        }
    }
}

impl Default for KeyedSite {
    fn default() -> Self {
        Self::new()
    }
}

struct Writer {
    /// New keys to turn away before the next sweep for idle breakers.
    sweep_after: usize,
    /// When the last sweep ran (the clock's nanoseconds): another is due after [`SWEEP_EVERY`]
    /// whatever `sweep_after` says, since keys go idle as time passes, not as keys arrive.
    swept_at: u64,
}

/// The longest a family at its cap goes without looking for idle keys while new keys arrive.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

impl Family {
    pub(crate) fn new(template: &BreakerConfig) -> Family {
        Family {
            base: template.base_name().into(),
            first: template.clone(),
            origin: AtomicUsize::new(0),
            mixed: AtomicBool::new(false),
            max_keys: template.max_keys().max(1) as usize,
            hasher: Default::default(),
            shards: (0..SHARDS).map(|_| Swap::new(Shard::default())).collect(),
            writer: Mutex::new(Writer {
                sweep_after: 0,
                swept_at: 0,
            }),
            len: AtomicUsize::new(0),
            overflow: OnceCell::new(),
            overflowed: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            retired: AtomicBool::new(false),
            generation: AtomicU64::new(next_generation()),
        }
    }

    /// Marks the family removed from its registry (see [`KeyedSite`]).
    pub(crate) fn retire(&self) {
        self.retired.store(true, Release);
        self.next_generation();
    }

    /// The family's generation: read before a lookup, it dates what the lookup found.
    #[inline]
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Acquire)
    }

    /// A key was removed (after the shard without it was stored): what was found before is
    /// no longer to be trusted.
    fn next_generation(&self) {
        self.generation.store(next_generation(), Release);
    }

    /// Whether the family was removed from its registry.
    #[inline]
    pub(crate) fn retired(&self) -> bool {
        self.retired.load(Acquire)
    }

    #[inline]
    pub(crate) fn hash(&self, key: &str) -> u64 {
        self.hasher.hash_one(key)
    }

    /// [`hash`](Self::hash) of a key given as its UTF-8 bytes: the same value, since a `str`
    /// hashes as its bytes and a `0xff` (std's `Hasher::write_str`).
    #[inline]
    pub(crate) fn hash_bytes(&self, key: &[u8]) -> u64 {
        let mut h = self.hasher.build_hasher();
        h.write(key);
        h.write_u8(0xff);
        h.finish()
    }

    #[inline]
    fn shard(&self, hash: u64) -> &Swap<Shard> {
        // The low bits pick the bucket inside the shard's map; the high bits pick the shard.
        &self.shards[(hash >> 60) as usize % SHARDS]
    }

    /// The key's breaker, if it has one: a lock-free load and one map probe.
    #[inline]
    pub(crate) fn get(&self, hash: u64, key: &str) -> Found {
        self.get_bytes(hash, key.as_bytes())
    }

    /// [`get`](Self::get) by the key's UTF-8 bytes.
    #[inline]
    pub(crate) fn get_bytes(&self, hash: u64, key: &[u8]) -> Found {
        match self.shard(hash).load().get_bytes(hash, key) {
            Some(b) => Found::Own(b.clone()),
            None => Found::Missing,
        }
    }

    /// True when `template` vouches for the settings of every breaker of the family (see the
    /// module's header). Called after the lookup that found the breaker.
    #[inline]
    pub(crate) fn vouched(&self, template: &'static BreakerConfig) -> bool {
        self.origin.load(Acquire) == address(template) && !self.mixed.load(Acquire)
    }

    /// Lets `template` vouch from now on, if its settings are the family's.
    pub(crate) fn vouch(&self, template: &'static BreakerConfig) {
        if template.same_settings(&self.first) {
            self.origin.store(address(template), Release);
        }
    }

    /// Keys with a breaker of their own now.
    pub(crate) fn len(&self) -> usize {
        self.len.load(Relaxed)
    }

    pub(crate) fn max_keys(&self) -> usize {
        self.max_keys
    }

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
            let due = |w: &Writer, now: u64| {
                w.sweep_after == 0
                    || now.saturating_sub(w.swept_at) >= SWEEP_EVERY.as_nanos() as u64
            };
            let swept = if let Some(now) = now.filter(|n| due(&w, *n)) {
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
        let mut copy = Shard::clone(&old);
        match copy.by_hash.entry(hash) {
            // Another key with the same hash holds the slot: this one goes by its name.
            std::collections::hash_map::Entry::Occupied(_) => {
                copy.collided.insert(key.into(), fresh.clone());
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(fresh.clone());
            }
        }
        swap.store(Arc::new(copy));
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
            if !cur.iter().any(is_idle) {
                continue;
            }
            let mut copy = Shard::default();
            let mut removed = 0;
            for (h, b) in &cur.by_hash {
                if is_idle(b) {
                    removed += 1;
                } else {
                    copy.by_hash.insert(*h, b.clone());
                }
            }
            for (k, b) in &cur.collided {
                if is_idle(b) {
                    removed += 1;
                } else {
                    copy.collided.insert(k.clone(), b.clone());
                }
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

    /// The overflow breaker, if any key ever overflowed.
    pub(crate) fn overflow(&self) -> Option<&Breaker> {
        self.overflow.get()
    }

    /// Removes one key's breaker; true if it had one.
    pub(crate) fn remove(&self, key: &str) -> bool {
        let hash = self.hash(key);
        let w = lock(&self.writer);
        let swap = self.shard(hash);
        let cur = swap.load().clone();
        if cur.get(hash, key).is_none() {
            return false;
        }
        let mut copy = Shard::clone(&cur);
        if copy.collided.remove(key).is_none() {
            copy.by_hash.remove(&hash);
            // A collided key moves up into the hash slot it now has to itself.
            if let Some(k) = copy.collided.keys().find(|k| self.hash(k) == hash).cloned() {
                if let Some(b) = copy.collided.remove(&k) {
                    copy.by_hash.insert(hash, b);
                }
            }
        }
        swap.store(Arc::new(copy));
        self.next_generation();
        self.len.fetch_sub(1, Relaxed);
        self.evicted.fetch_add(1, Relaxed);
        drop(w);
        drop(cur);
        true
    }

    /// Every breaker of the family, the overflow breaker last.
    pub(crate) fn breakers(&self) -> Vec<Breaker> {
        let mut v: Vec<Breaker> = Vec::with_capacity(self.len() + 1);
        for s in self.shards.iter() {
            v.extend(s.load().iter().cloned());
        }
        v.extend(self.overflow.get().cloned());
        v
    }

    /// The breaker named `base/key` (the overflow breaker too).
    pub(crate) fn find(&self, key: &str) -> Option<Breaker> {
        if key == OVERFLOW_KEY {
            return self.overflow.get().cloned();
        }
        match self.get(self.hash(key), key) {
            Found::Own(b) => Some(b),
            Found::Missing => None,
        }
    }
}

fn address(template: &'static BreakerConfig) -> usize {
    template as *const BreakerConfig as usize
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

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::LazyLock;

    use super::*;
    use crate::breaker::events::Events;
    use crate::settings::BreakerBuilder;

    static TWO: LazyLock<BreakerConfig> = LazyLock::new(|| {
        BreakerBuilder::new("vouch")
            .window_calls(2)
            .config()
            .unwrap()
    });
    static NINE: LazyLock<BreakerConfig> = LazyLock::new(|| {
        BreakerBuilder::new("vouch")
            .window_calls(9)
            .config()
            .unwrap()
    });

    #[test]
    fn a_key_hashes_the_same_as_a_str_and_as_its_bytes() {
        let family = Family::new(&TWO);
        for k in ["", "3", "db-1.internal:5432", &"x".repeat(200)] {
            assert_eq!(family.hash(k), family.hash_bytes(k.as_bytes()), "{k:?}");
        }
    }

    #[test]
    fn a_static_template_vouches_until_a_breaker_has_other_settings() {
        let family = Family::new(&TWO);
        assert!(
            !family.vouched(&TWO),
            "not before its settings were compared"
        );
        family.vouch(&NINE);
        assert!(!family.vouched(&NINE), "other settings never vouch");
        family.vouch(&TWO);
        assert!(family.vouched(&TWO));
        let events = Events::new();
        let key = TWO.with_key("a");
        family.insert(family.hash("a"), key, &events);
        assert!(family.vouched(&TWO), "a breaker with the same settings");
        family.insert(family.hash("b"), NINE.with_key("b"), &events);
        assert!(
            !family.vouched(&TWO),
            "key b has other settings: compare again"
        );
    }
}
