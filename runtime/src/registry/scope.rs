//! Which registry the calling code sees: the process-wide one, or (feature `testing`) the
//! registry of the test scope entered on the calling thread.
//!
//! The registry knows nothing of test scopes: `testing` installs [`SCOPED`] when a scope is
//! first entered, and the process-wide registry asks it before every operation. Without the
//! feature the answer is a constant and the question compiles away.

use std::ops::Deref;
#[cfg(feature = "testing")]
use std::sync::Arc;

use super::Registry;
#[cfg(feature = "testing")]
use crate::breaker::events::Events;
#[cfg(feature = "testing")]
use crate::scope_hook::ScopeHook;

/// Set by `testing`: the registry of the scope entered on this thread, if any.
#[cfg(feature = "testing")]
pub(crate) static SCOPED: ScopeHook<Registry> = ScopeHook::new();

/// A registry to act on: borrowed, or a test scope's, shared.
pub(super) enum Current<'a> {
    Here(&'a Registry),
    #[cfg(feature = "testing")]
    Scoped(Arc<Registry>),
}

impl Deref for Current<'_> {
    type Target = Registry;
    #[inline]
    fn deref(&self) -> &Registry {
        match self {
            Current::Here(r) => r,
            #[cfg(feature = "testing")]
            Current::Scoped(r) => r,
        }
    }
}

impl Registry {
    /// The registry of one test scope, with its own transition channel. It lists every
    /// annotated site from the start too, with its own fresh state, so a test can reach (and
    /// force open) a breaker before calling the function, as an operator can in production.
    #[cfg(feature = "testing")]
    pub(crate) fn for_scope() -> Registry {
        let r = Registry::new(Events::new(), false);
        r.preload();
        r
    }

    /// The registry the calling code sees: a test scope's while one is entered on this thread
    /// (feature `testing`), else this one. Without the feature this is a constant.
    #[inline]
    pub(super) fn current(&self) -> Current<'_> {
        #[cfg(feature = "testing")]
        if self.defers_to_scope {
            if let Some(scoped) = SCOPED.current() {
                return Current::Scoped(scoped);
            }
        }
        Current::Here(self)
    }

    /// True when the calling code sees a test scope's registry rather than the global one.
    pub fn is_scoped(&self) -> bool {
        !matches!(self.current(), Current::Here(_))
    }
}
