//! A test scope: a registry (and stale caches) of the current thread's own, entered on
//! creation and left on drop. The layers below find it through hooks this file installs.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::Arc;

use super::recorder::Recorder;
use crate::registry::{self, Registry};
use crate::retry::{self, names::Budgets};
use crate::stale::{self, scoped::ScopedCaches};

/// What one scope owns: a registry and the stale caches of its call sites.
struct Entered {
    registry: Arc<Registry>,
    stale: Arc<ScopedCaches>,
}

thread_local! {
    static CURRENT: RefCell<Vec<Entered>> = const { RefCell::new(Vec::new()) };
}

/// The registry of the innermost scope entered on this thread.
fn current_registry() -> Option<Arc<Registry>> {
    CURRENT.with(|c| c.borrow().last().map(|e| e.registry.clone()))
}

/// The retry budgets of the innermost scope's registry.
fn current_budgets() -> Option<Arc<Budgets>> {
    current_registry().map(|r| r.retry_budgets.clone())
}

/// The stale caches of the innermost scope entered on this thread.
fn current_stale() -> Option<Arc<ScopedCaches>> {
    CURRENT.with(|c| c.borrow().last().map(|e| e.stale.clone()))
}

/// A registry of the current thread's own, entered on creation and left on drop.
///
/// A `#[tokio::test]` runs every task of its (current-thread) runtime on the test's thread,
/// so all of them see the scope. Scopes nest; dropping one restores the one outside it.
#[must_use = "the scope ends when this guard is dropped"]
pub struct Scope {
    registry: Arc<Registry>,
    // Entered on one thread, left on the same one.
    _not_send: PhantomData<*const ()>,
}

/// Enters a fresh, empty registry for the code on this thread.
pub fn scope() -> Scope {
    // The layers below ask through these hooks; installing them twice keeps the first.
    registry::scope::SCOPED.install(current_registry);
    stale::scoped::SCOPED.install(current_stale);
    retry::names::SCOPED.install(current_budgets);
    let registry = Arc::new(Registry::for_scope());
    CURRENT.with(|c| {
        c.borrow_mut().push(Entered {
            registry: registry.clone(),
            stale: Arc::default(),
        })
    });
    Scope {
        registry,
        _not_send: PhantomData,
    }
}

impl Scope {
    /// Starts recording this scope's transitions.
    pub fn recorder(&self) -> Recorder {
        Recorder::new(self.registry.tap())
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        CURRENT.with(|c| {
            let mut stack = c.borrow_mut();
            if let Some(i) = stack
                .iter()
                .rposition(|e| Arc::ptr_eq(&e.registry, &self.registry))
            {
                stack.remove(i);
            }
        });
    }
}
