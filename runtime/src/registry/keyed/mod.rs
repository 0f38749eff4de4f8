//! The breakers of one keyed name (`name/key`): bounded by `max_keys`, found without a lock.
//!
//! - **Lookups never wait.** The keys are spread over [`SHARDS`] shards by a keyed SipHash
//!   (std's `RandomState`: keys come from requests, so the hash must not be predictable; the cap
//!   already bounds a shard, and SipHash keeps a crafted key set from piling into one chain).
//!   Each shard is an immutable map behind a [`Swap`]: a lookup loads it and reads it; a new key
//!   copies its shard (at most `max_keys / SHARDS` entries on average), adds itself and swaps the
//!   copy in. Writers queue on the family's `writer` mutex, which no lookup takes; all
//!   allocation, and every log line, happens outside anything a lookup could wait on.
//! - **The cap never refuses a call.** At `max_keys`, idle breakers (closed with an empty
//!   window, or quiet: no call for 30 s, not forced, not in an open period; neither with calls
//!   in flight; `cap.rs`) are
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

mod cap;
mod shard;

use cap::Writer;
use shard::{KeyHasher, Shard, SHARDS};

use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

use once_cell::sync::OnceCell;

use super::key_name::OVERFLOW_KEY;
use crate::breaker::Breaker;
use crate::settings::BreakerConfig;
use crate::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};
use crate::sync::{Mutex, Swap};

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

/// A keyed call site's `static`: the fn that makes its settings template (`#[breaker]`'s
/// `config`), the template it made, and the keyed name it found in the
/// process-wide registry, so each call skips the lookup of the name (an `arc-swap` load and a
/// map probe) and goes straight to its key. Only the process-wide registry's is kept (a test
/// scope's registry comes and goes); a family removed by `evict_keys` is looked up again.
#[doc(hidden)]
pub struct KeyedSite {
    /// What makes the site's template (once, at its first call). The site holds it, not each
    /// call's `KeyedBreaker`: a keyed call's future carries that, and is a word smaller.
    pub(crate) config: fn() -> BreakerConfig,
    pub(crate) template: OnceCell<BreakerConfig>,
    pub(crate) family: OnceCell<Arc<Family>>,
}

impl KeyedSite {
    /// An empty site whose template `config` makes, for a `static`.
    pub const fn new(config: fn() -> BreakerConfig) -> KeyedSite {
        KeyedSite {
            config,
            template: OnceCell::new(),
            family: OnceCell::new(),
        }
    }

    /// The site's template, made at its first use.
    pub(crate) fn template(&self) -> &BreakerConfig {
        self.template.get_or_init(self.config)
    }
}

impl Family {
    /// The template the family was made from (its name is the keyed name, without a key).
    pub(crate) fn template(&self) -> &BreakerConfig {
        &self.first
    }

    pub(crate) fn new(template: &BreakerConfig) -> Family {
        Family {
            base: template.base_name().into(),
            first: template.clone(),
            origin: AtomicUsize::new(0),
            mixed: AtomicBool::new(false),
            max_keys: template.max_keys().max(1) as usize,
            hasher: Default::default(),
            shards: (0..SHARDS).map(|_| Swap::new(Shard::default())).collect(),
            writer: Mutex::new(Writer::new()),
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

    /// The overflow breaker, if any key ever overflowed.
    pub(crate) fn overflow(&self) -> Option<&Breaker> {
        self.overflow.get()
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
