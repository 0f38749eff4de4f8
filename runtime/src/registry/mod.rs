//! The global registry: one breaker per name (and per `name/key`), one bulkhead per name.
//!
//! Call sites with a static name look their breaker up once and cache it, so the registry's
//! lock is never on their hot path. Keyed call sites look up per call under a read lock,
//! formatting the key into a reused thread-local buffer (no allocation once warm).
//!
//! Every method is written once, on [`Registry`]; the process-wide registry first asks
//! [`scope`] whether a test scope (feature `testing`) is entered on the calling thread, and if
//! so acts on that scope's registry instead.

mod register;
pub(crate) mod scope;
pub(crate) mod sites;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, RwLock};

use once_cell::sync::Lazy;
use tokio::sync::broadcast;

use crate::breaker::events::{Events, Transition};
use crate::breaker::Breaker;
use crate::bulkhead::Bulkhead;

/// Named breakers and bulkheads shared by every call site of a process.
///
/// ```
/// use fusebox_runtime::{registry, Breaker};
/// let b = Breaker::builder("registry-doc").build().unwrap();
/// assert!(registry().breaker("registry-doc").unwrap().state() == b.state());
/// assert!(registry().breaker("no-such-breaker").is_none());
/// ```
pub struct Registry {
    breakers: RwLock<HashMap<Arc<str>, Breaker, Hasher>>,
    bulkheads: RwLock<HashMap<Arc<str>, Bulkhead, Hasher>>,
    events: Events,
    /// True for the process-wide registry only: it defers to the test scope entered on the
    /// calling thread; a scope's own registry never defers further.
    #[cfg(feature = "testing")]
    defers_to_scope: bool,
}

/// Per-process seeded, fast: the keyed hot path hashes a name per call.
type Hasher = foldhash::fast::RandomState;

// Every annotated site is listed from the start (`sites`): materialised on first access.
static REGISTRY: Lazy<Registry> = Lazy::new(|| {
    let r = Registry::new(Events::global(), true);
    r.preload();
    r
});

/// The process-wide registry.
pub fn registry() -> &'static Registry {
    &REGISTRY
}

fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    // Nothing panics while holding these locks; recover rather than propagate a poison.
    l.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

impl Registry {
    fn new(events: Events, defers_to_scope: bool) -> Registry {
        #[cfg(not(feature = "testing"))]
        let _ = defers_to_scope;
        Registry {
            breakers: RwLock::new(HashMap::default()),
            bulkheads: RwLock::new(HashMap::default()),
            events,
            #[cfg(feature = "testing")]
            defers_to_scope,
        }
    }

    /// The breaker registered under `name` (`"redis/3"` for a keyed one).
    pub fn breaker(&self, name: &str) -> Option<Breaker> {
        read(&self.current().breakers).get(name).cloned()
    }

    /// The bulkhead registered under `name`.
    pub fn bulkhead(&self, name: &str) -> Option<Bulkhead> {
        read(&self.current().bulkheads).get(name).cloned()
    }

    /// Every breaker, sorted by name.
    pub fn breakers(&self) -> Vec<Breaker> {
        let mut v: Vec<Breaker> = read(&self.current().breakers).values().cloned().collect();
        v.sort_by(|a, b| a.name().cmp(b.name()));
        v
    }

    /// Every bulkhead, sorted by name.
    pub fn bulkheads(&self) -> Vec<Bulkhead> {
        let mut v: Vec<Bulkhead> = read(&self.current().bulkheads).values().cloned().collect();
        v.sort_by(|a, b| a.name().cmp(b.name()));
        v
    }

    /// Removes a keyed breaker (`"redis/3"`); the next call for that key starts a fresh one.
    ///
    /// Breakers without a key are never evicted: call sites cache them, and an evicted one
    /// would go on living there, unseen by metrics. Returns whether an entry was removed.
    pub fn evict(&self, name: &str) -> bool {
        let here = self.current();
        let mut map = write(&here.breakers);
        match map.get(name) {
            Some(b) if b.config().key().is_some() => map.remove(name).is_some(),
            _ => false,
        }
    }

    /// Removes every keyed breaker under `base` (`"redis"` removes `redis/0`, `redis/1`...).
    pub fn evict_keys(&self, base: &str) -> usize {
        let here = self.current();
        let mut map = write(&here.breakers);
        let before = map.len();
        map.retain(|_, b| !(b.config().key().is_some() && b.config().base_name() == base));
        before - map.len()
    }

    /// Every transition of every breaker of this registry from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Transition> {
        self.current().events.subscribe()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let here = self.current();
        let breakers = read(&here.breakers).len();
        let bulkheads = read(&here.bulkheads).len();
        f.debug_struct("Registry")
            .field("breakers", &breakers)
            .field("bulkheads", &bulkheads)
            .field("scoped", &self.is_scoped())
            .finish()
    }
}
