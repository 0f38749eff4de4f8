//! The global registry: one breaker per name (and per `name/key`), one bulkhead per name.
//!
//! Call sites with a static name look their breaker up once and cache it, so the registry's
//! lock is never on their hot path. Keyed call sites look up per call under a read lock,
//! formatting the key into a reused thread-local buffer (no allocation once warm).

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, RwLock};

use once_cell::sync::Lazy;
use tokio::sync::broadcast;

use crate::breaker::core::bump;
use crate::bulkhead::BulkheadConfig;
use crate::config::BreakerConfig;
use crate::events::{Events, Transition};
use crate::{Breaker, Bulkhead};

/// Named breakers and bulkheads shared by every call site of a process.
///
/// ```
/// use fusebox_runtime::{registry, Breaker};
/// let b = Breaker::builder("registry-doc").build().unwrap();
/// assert!(registry().breaker("registry-doc").unwrap().state() == b.state());
/// assert!(registry().breaker("no-such-breaker").is_none());
/// ```
pub struct Registry {
    global: Arc<Maps>,
}

/// The contents of one registry: the process-wide one, or a test scope's
/// (feature `testing`, see `fusebox::testing`).
pub(crate) struct Maps {
    breakers: RwLock<HashMap<Arc<str>, Breaker, Hasher>>,
    bulkheads: RwLock<HashMap<Arc<str>, Bulkhead, Hasher>>,
    events: Events,
    /// A test scope's stale caches, by call site and type (`stale_for`).
    #[cfg(feature = "testing")]
    stale: std::sync::Mutex<StaleCaches>,
}

/// Per-process seeded, fast: the keyed hot path hashes a name per call.
type Hasher = foldhash::fast::RandomState;

#[cfg(feature = "testing")]
type StaleCaches = HashMap<(usize, std::any::TypeId), Arc<dyn std::any::Any + Send + Sync>>;

static REGISTRY: Lazy<Registry> = Lazy::new(|| Registry {
    global: Arc::new(Maps::new(Events::global())),
});

/// The process-wide registry.
pub fn registry() -> &'static Registry {
    &REGISTRY
}

thread_local! {
    static KEY_BUF: RefCell<String> = const { RefCell::new(String::new()) };
}

fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    // Nothing panics while holding these locks; recover rather than propagate a poison.
    l.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

impl Registry {
    /// The registry the calling code sees: a test scope's while one is entered on this thread
    /// (feature `testing`), else the process-wide one. Without the feature this is a constant.
    #[inline]
    fn maps(&self) -> MapsRef<'_> {
        #[cfg(feature = "testing")]
        if let Some(scoped) = crate::testing::current() {
            return MapsRef::Scoped(scoped);
        }
        MapsRef::Global(&self.global)
    }

    /// The breaker registered under `name` (`"redis/3"` for a keyed one).
    pub fn breaker(&self, name: &str) -> Option<Breaker> {
        self.maps().breaker(name)
    }

    /// The bulkhead registered under `name`.
    pub fn bulkhead(&self, name: &str) -> Option<Bulkhead> {
        self.maps().bulkhead(name)
    }

    /// Every breaker, sorted by name.
    pub fn breakers(&self) -> Vec<Breaker> {
        self.maps().breakers()
    }

    /// Every bulkhead, sorted by name.
    pub fn bulkheads(&self) -> Vec<Bulkhead> {
        self.maps().bulkheads()
    }

    /// The breaker of `config.name()`, created with `config` if new.
    ///
    /// A name registered before with other settings keeps its first settings: the conflict is
    /// logged at ERROR and counted in its metrics (`conflicts`), never silently mixed.
    pub fn register(&self, config: BreakerConfig) -> Breaker {
        self.maps().register(config)
    }

    /// The breaker for `key` under `template`'s name: `name/key`, created on first use.
    ///
    /// ```
    /// use fusebox_runtime::{registry, Breaker};
    /// let template = Breaker::builder("shard-doc").config().unwrap();
    /// let shard = registry().keyed(&template, &3);
    /// assert_eq!(shard.name(), "shard-doc/3");
    /// assert!(registry().keyed(&template, &3).ptr_eq(&shard));
    /// ```
    pub fn keyed(&self, template: &BreakerConfig, key: &dyn fmt::Display) -> Breaker {
        self.maps().keyed(template, key)
    }

    /// The bulkhead of `config.name()`, created if new; conflicts as for [`register`](Self::register).
    pub fn register_bulkhead(&self, config: BulkheadConfig) -> Bulkhead {
        self.maps().register_bulkhead(config)
    }

    /// Removes a keyed breaker (`"redis/3"`); the next call for that key starts a fresh one.
    ///
    /// Breakers without a key are never evicted: call sites cache them, and an evicted one
    /// would go on living there, unseen by metrics. Returns whether an entry was removed.
    pub fn evict(&self, name: &str) -> bool {
        self.maps().evict(name)
    }

    /// Removes every keyed breaker under `base` (`"redis"` removes `redis/0`, `redis/1`...).
    pub fn evict_keys(&self, base: &str) -> usize {
        self.maps().evict_keys(base)
    }

    /// Every transition of every breaker of this registry from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Transition> {
        self.maps().subscribe()
    }

    /// True when the calling code sees a test scope's registry rather than the global one.
    pub fn is_scoped(&self) -> bool {
        !matches!(self.maps(), MapsRef::Global(_))
    }
}

/// Borrowed global maps, or a scope's shared ones.
enum MapsRef<'a> {
    Global(&'a Maps),
    #[cfg(feature = "testing")]
    Scoped(Arc<Maps>),
}

impl std::ops::Deref for MapsRef<'_> {
    type Target = Maps;
    fn deref(&self) -> &Maps {
        match self {
            MapsRef::Global(m) => m,
            #[cfg(feature = "testing")]
            MapsRef::Scoped(m) => m,
        }
    }
}

impl Maps {
    pub(crate) fn new(events: Events) -> Maps {
        Maps {
            breakers: RwLock::new(HashMap::default()),
            bulkheads: RwLock::new(HashMap::default()),
            events,
            #[cfg(feature = "testing")]
            stale: std::sync::Mutex::new(HashMap::new()),
        }
    }

    /// The scope's stale cache of call site `site` for the cache type `ty`, made if new.
    #[cfg(feature = "testing")]
    pub(crate) fn stale_cache(
        &self,
        site: usize,
        ty: std::any::TypeId,
        make: impl FnOnce() -> Arc<dyn std::any::Any + Send + Sync>,
    ) -> Arc<dyn std::any::Any + Send + Sync> {
        let mut caches = self.stale.lock().unwrap_or_else(|e| e.into_inner());
        caches.entry((site, ty)).or_insert_with(make).clone()
    }

    /// The breaker registered under `name` (`"redis/3"` for a keyed one).
    pub(crate) fn breaker(&self, name: &str) -> Option<Breaker> {
        read(&self.breakers).get(name).cloned()
    }

    /// The bulkhead registered under `name`.
    pub(crate) fn bulkhead(&self, name: &str) -> Option<Bulkhead> {
        read(&self.bulkheads).get(name).cloned()
    }

    /// Every breaker, sorted by name.
    pub(crate) fn breakers(&self) -> Vec<Breaker> {
        let mut v: Vec<Breaker> = read(&self.breakers).values().cloned().collect();
        v.sort_by(|a, b| a.name().cmp(b.name()));
        v
    }

    /// Every bulkhead, sorted by name.
    pub(crate) fn bulkheads(&self) -> Vec<Bulkhead> {
        let mut v: Vec<Bulkhead> = read(&self.bulkheads).values().cloned().collect();
        v.sort_by(|a, b| a.name().cmp(b.name()));
        v
    }

    /// The breaker of `config.name()`, created with `config` if new.
    ///
    /// A name registered before with other settings keeps its first settings: the conflict is
    /// logged at ERROR and counted in its metrics (`conflicts`), never silently mixed.
    pub(crate) fn register(&self, config: BreakerConfig) -> Breaker {
        if let Some(b) = self.breaker(config.name()) {
            return checked(b, &config);
        }
        let mut map = write(&self.breakers);
        if let Some(b) = map.get(config.name()) {
            return checked(b.clone(), &config);
        }
        let b = Breaker::with_events(config, self.events.clone());
        map.insert(b.0.config.name.clone(), b.clone());
        b
    }

    /// The breaker for `key` under `template`'s name: `name/key`, created on first use.
    pub(crate) fn keyed(&self, template: &BreakerConfig, key: &dyn fmt::Display) -> Breaker {
        let found = KEY_BUF.with(|buf| {
            // A key whose Display re-enters the registry gets a fresh buffer instead of a panic.
            let mut local = String::new();
            let mut guard = buf.try_borrow_mut().ok();
            let s = guard.as_deref_mut().unwrap_or(&mut local);
            s.clear();
            s.push_str(template.base_name());
            s.push('/');
            let _ = write!(s, "{key}");
            match read(&self.breakers).get(s.as_str()) {
                Some(b) => Ok(b.clone()),
                None => Err(s[template.base_name().len() + 1..].to_owned()),
            }
        });
        // A call site's template is a `static`: once an entry was created from (or checked
        // against) this very template, its address says "same settings" in one compare.
        let origin = template as *const BreakerConfig as usize;
        match found {
            Ok(b) if b.0.origin.load(Relaxed) == origin => b,
            Ok(b) => {
                if !b.0.config.same_settings(template) {
                    let wanted = template.with_key(b.config().key().unwrap_or_default());
                    return checked(b, &wanted);
                }
                b.0.origin.store(origin, Relaxed);
                b
            }
            Err(key) => {
                let b = self.register(template.with_key(&key));
                if b.0.config.same_settings(template) {
                    b.0.origin.store(origin, Relaxed);
                }
                b
            }
        }
    }

    /// The bulkhead of `config.name()`, created if new; conflicts as for [`register`](Self::register).
    pub(crate) fn register_bulkhead(&self, config: BulkheadConfig) -> Bulkhead {
        let mut map = write(&self.bulkheads);
        if let Some(b) = map.get(&config.name) {
            if b.0.config != config {
                bump(&b.0.conflicts);
                tracing::error!(
                    bulkhead = %config.name,
                    kept = ?b.0.config,
                    ignored = ?config,
                    "bulkhead registered twice with different settings; keeping the first"
                );
            }
            return b.clone();
        }
        let b = Bulkhead::new(config);
        map.insert(b.0.config.name.clone(), b.clone());
        b
    }

    /// Removes a keyed breaker (`"redis/3"`); the next call for that key starts a fresh one.
    ///
    /// Breakers without a key are never evicted: call sites cache them, and an evicted one
    /// would go on living there, unseen by metrics. Returns whether an entry was removed.
    pub(crate) fn evict(&self, name: &str) -> bool {
        let mut map = write(&self.breakers);
        match map.get(name) {
            Some(b) if b.config().key().is_some() => map.remove(name).is_some(),
            _ => false,
        }
    }

    /// Removes every keyed breaker under `base` (`"redis"` removes `redis/0`, `redis/1`...).
    pub(crate) fn evict_keys(&self, base: &str) -> usize {
        let mut map = write(&self.breakers);
        let before = map.len();
        map.retain(|_, b| !(b.config().key().is_some() && b.config().base_name() == base));
        before - map.len()
    }

    /// Every transition of every breaker from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Transition> {
        self.events.subscribe()
    }
}

fn checked(existing: Breaker, wanted: &BreakerConfig) -> Breaker {
    if existing.0.config != *wanted {
        let before = existing
            .0
            .counters
            .conflicts
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // A conflicting keyed call site meets this on every call: log the 1st, 2nd, 4th, 8th...
        // occurrence, so the ERROR stays loud without flooding the log; metrics count them all.
        if before == 0 || before.is_power_of_two() {
            tracing::error!(
                breaker = %wanted.name(),
                kept = ?existing.0.config,
                ignored = ?wanted,
                conflicts = before + 1,
                "circuit breaker registered twice with different settings; keeping the first"
            );
        }
    }
    existing
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.maps();
        let breakers = read(&m.breakers).len();
        let bulkheads = read(&m.bulkheads).len();
        f.debug_struct("Registry")
            .field("breakers", &breakers)
            .field("bulkheads", &bulkheads)
            .field("scoped", &self.is_scoped())
            .finish()
    }
}
