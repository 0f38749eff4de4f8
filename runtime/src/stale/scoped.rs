//! A test scope's own stale caches (feature `testing`): inside a scope, every call site
//! answers from the scope's cache, so parallel tests never see each other's last good values.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::scope_hook::ScopeHook;

/// A cache of any key and value type; the call site downcasts it.
type Erased = Arc<dyn Any + Send + Sync>;

/// The stale caches of one test scope, by call site and cache type.
#[derive(Default)]
pub(crate) struct ScopedCaches(Mutex<HashMap<(usize, TypeId), Erased>>);

/// Set by `testing` when a scope is first entered: the caches of the scope entered on this thread.
pub(crate) static SCOPED: ScopeHook<ScopedCaches> = ScopeHook::new();

impl ScopedCaches {
    /// The scope's cache of call site `site` for the cache type `ty`, made if new.
    pub(crate) fn cache(&self, site: usize, ty: TypeId, make: impl FnOnce() -> Erased) -> Erased {
        let mut caches = crate::sync::lock_std(&self.0);
        caches.entry((site, ty)).or_insert_with(make).clone()
    }
}
