//! The global registry: one breaker per name (and per `name/key`), one bulkhead per name.
//!
//! Call sites with a static name look their breaker up once and cache it, so the registry's
//! lock is never on their hot path. Keyed call sites look up per call without a lock: the
//! keyed names and each name's keys are read-copy-update maps ([`keyed`]), bounded by
//! `max_keys`; an integer or string key is written as it is, others formatted on the stack or
//! into a reused thread-local buffer (no allocation once warm), and checked like a name
//! ([`key_name`]); a call site's recent keys are answered per thread first (`hot_keys`).
//!
//! Every method is written once, on [`Registry`]; the process-wide registry first asks
//! [`scope`] whether a test scope (feature `testing`) is entered on the calling thread, and if
//! so acts on that scope's registry instead.

mod hot_keys;
pub(crate) mod key_form;
pub mod key_name;
pub(crate) mod keyed;
mod keyed_breaker;
mod overrides;
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
use crate::retry::names::Budgets;
use crate::retry::RetryBudget;
use crate::sync::{lock, Mutex, Swap};
use keyed::Family;
pub use keyed::KeyedSite;
pub use keyed_breaker::KeyedBreaker;
pub(crate) use register::Key;

/// Named breakers and bulkheads shared by every call site of a process.
///
/// ```
/// use fusebox::{registry, Breaker};
/// let b = Breaker::builder("registry-doc").build().unwrap();
/// assert!(registry().breaker("registry-doc").unwrap().state() == b.state());
/// assert!(registry().breaker("no-such-breaker").is_none());
/// ```
pub struct Registry {
    /// Breakers without a key, by name.
    breakers: RwLock<HashMap<Arc<str>, Breaker, Hasher>>,
    /// Keyed names (the name without its key), each with its bounded set of keys.
    families: Swap<Families>,
    /// Serialises changes to `families`; lookups never take it.
    families_writer: Mutex<()>,
    bulkheads: RwLock<HashMap<Arc<str>, Bulkhead, Hasher>>,
    /// Retry budgets by name (`crate::retry`), lent to the retry layer (a scope's through
    /// its hook), so a test scope's retries draw on budgets of its own.
    pub(crate) retry_budgets: Arc<Budgets>,
    events: Events,
    /// The start's overrides applied so far (issue 29, `overrides.rs`), for names made later.
    overrides: RwLock<Vec<crate::settings::overrides::Entry>>,
    overrides_writer: Mutex<()>,
    /// Whether any override was applied: a name made before that reads nothing more.
    has_overrides: std::sync::atomic::AtomicBool,
    /// True for the process-wide registry only: it defers to the test scope entered on the
    /// calling thread; a scope's own registry never defers further.
    #[cfg(feature = "testing")]
    defers_to_scope: bool,
    /// The process-wide registry: the one whose keyed call sites keep recent keys per thread.
    global: bool,
}

/// Per-process seeded, fast: names come from code, not from requests (keys are hashed with
/// SipHash in [`keyed`]).
type Hasher = foldhash::fast::RandomState;

type Families = HashMap<Arc<str>, Arc<Family>, Hasher>;

// Every annotated site is listed from the start (`sites`): materialised on first access.
static REGISTRY: Lazy<Registry> = Lazy::new(|| {
    let r = Registry::new(Events::global(), true);
    r.preload();
    r
});

/// The process-wide registry.
// Inlined: a keyed call asks for it on every call, and the call and return cost more than the
// one load and compare it is once made.
#[inline]
pub fn registry() -> &'static Registry {
    &REGISTRY
}

use crate::sync::{read, write};

impl Registry {
    fn new(events: Events, defers_to_scope: bool) -> Registry {
        Registry {
            breakers: RwLock::new(HashMap::default()),
            families: Swap::new(HashMap::default()),
            families_writer: Mutex::new(()),
            bulkheads: RwLock::new(HashMap::default()),
            retry_budgets: if defers_to_scope {
                crate::retry::names::global()
            } else {
                Arc::default()
            },
            events,
            overrides: RwLock::new(Vec::new()),
            overrides_writer: Mutex::new(()),
            has_overrides: std::sync::atomic::AtomicBool::new(false),
            #[cfg(feature = "testing")]
            defers_to_scope,
            global: defers_to_scope,
        }
    }

    /// A registry of its own, for one loom model run (loom's objects live for one run only).
    #[cfg(loom)]
    pub(crate) fn for_model() -> Registry {
        Registry::new(Events::new(), false)
    }

    /// The breaker registered under `name` (`"redis/3"` for a keyed one).
    pub fn breaker(&self, name: &str) -> Option<Breaker> {
        let here = self.current();
        if let Some(b) = read(&here.breakers).get(name) {
            // A test (or a service) looking its breaker up: a fresh one counts from now.
            b.0.first_used();
            return Some(b.clone());
        }
        // A key never holds a `/` (see `key_name`), so the last one ends the name.
        let (base, key) = name.rsplit_once('/')?;
        here.family(base)?.find(key)
    }

    /// The retry budget of `name`, if a [`Retry`](crate::retry::Retry) of that name was
    /// built (inside a test scope: in the scope's registry, so tests never share one).
    ///
    /// ```
    /// use fusebox::registry;
    /// use fusebox::retry::Retry;
    /// let _ = Retry::builder("registry-retry-doc").build().unwrap();
    /// assert_eq!(registry().retry_budget("registry-retry-doc").unwrap().calls(), 0);
    /// ```
    pub fn retry_budget(&self, name: &str) -> Option<Arc<RetryBudget>> {
        self.current().retry_budgets.get(name)
    }

    /// The bulkhead registered under `name`.
    pub fn bulkhead(&self, name: &str) -> Option<Bulkhead> {
        read(&self.current().bulkheads).get(name).cloned()
    }

    /// Every breaker, sorted by name.
    pub fn breakers(&self) -> Vec<Breaker> {
        let here = self.current();
        let mut v: Vec<Breaker> = read(&here.breakers).values().cloned().collect();
        let families: Vec<Arc<Family>> = here.families.load().values().cloned().collect();
        for f in families {
            v.extend(f.breakers());
        }
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
    /// Keyed names also evict idle keys by themselves at `max_keys`.
    pub fn evict(&self, name: &str) -> bool {
        let here = self.current();
        match name.rsplit_once('/') {
            Some((base, key)) => here.family(base).is_some_and(|f| f.remove(key)),
            None => false,
        }
    }

    /// Removes every keyed breaker under `base` (`"redis"` removes `redis/0`, `redis/1`...,
    /// and `redis/_overflow`). One swap of the keyed names' map, not a scan of every breaker.
    pub fn evict_keys(&self, base: &str) -> usize {
        let here = self.current();
        let guard = lock(&here.families_writer);
        let cur = here.families.load().clone();
        let Some(family) = cur.get(base).cloned() else {
            return 0;
        };
        let mut next = Families::clone(&cur);
        next.remove(base);
        here.families.store(Arc::new(next));
        // A call site that cached it finds the name again (a fresh family on its next call).
        family.retire();
        drop(guard);
        family.len() + usize::from(family.overflow().is_some())
    }

    /// The keyed name `base`, if it has been used.
    fn family(&self, base: &str) -> Option<Arc<Family>> {
        self.families.load().get(base).cloned()
    }

    /// Figures of every keyed name: keys held, the cap, keys evicted and sent to overflow.
    pub fn keyed_names(&self) -> Vec<KeyedNames> {
        let here = self.current();
        let mut v: Vec<KeyedNames> = here
            .families
            .load()
            .values()
            .map(|f| KeyedNames {
                name: f.base.to_string(),
                keys: f.len(),
                max_keys: f.max_keys(),
                overflowed: f.overflowed.load(std::sync::atomic::Ordering::Relaxed),
                evicted: f.evicted.load(std::sync::atomic::Ordering::Relaxed),
            })
            .collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    /// Every transition of every breaker of this registry from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Transition> {
        self.current().events.subscribe()
    }

    /// Every transition of this registry from now on, none lost (a test's recorder).
    #[cfg(feature = "testing")]
    pub(crate) fn tap(&self) -> crate::breaker::events::Tap {
        self.current().events.tap()
    }
}

/// The figures of one keyed name (`key = ...`), from [`Registry::keyed_names`].
///
/// ```
/// use fusebox::{registry, Breaker};
/// let template = Breaker::builder("keyed-names-doc").max_keys(2).config().unwrap();
/// let names = || registry().keyed_names().into_iter().find(|k| k.name == "keyed-names-doc").unwrap();
/// // Idle keys (closed with an empty window, or no call for 30 s; none in flight) make room...
/// for host in ["a", "b", "c"] {
///     registry().keyed(&template, &host);
/// }
/// assert_eq!((names().keys, names().evicted), (1, 2));
/// // ...busy ones do not: past the cap, new keys share `name/_overflow`.
/// registry().keyed(&template, &"c").force_open();
/// registry().keyed(&template, &"d").force_open();
/// let e = registry().keyed(&template, &"e");
/// assert_eq!(e.name(), "keyed-names-doc/_overflow");
/// assert_eq!((names().keys, names().max_keys, names().overflowed), (2, 2, 1));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct KeyedNames {
    /// The name without its key.
    pub name: String,
    /// Keys with a breaker of their own now.
    pub keys: usize,
    /// The `max_keys` cap.
    pub max_keys: usize,
    /// Lookups of a new key that went to `name/_overflow` because the cap was reached.
    pub overflowed: u64,
    /// Keys removed: idle ones at the cap, and by [`Registry::evict`].
    pub evicted: u64,
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
