//! A seam through which the test scopes of `testing` (feature `testing`) lend a lower layer
//! the state of the scope entered on this thread, so that layer never imports `testing`.
//!
//! The lower layer owns a `static` hook and asks it for the current scope's part; `testing`
//! installs the function that answers the first time a scope is entered. Until then (and
//! always, in a process that never enters a scope) the answer is `None`.

use std::sync::Arc;

use once_cell::sync::OnceCell;

/// Where a lower layer asks for the current test scope's `T`.
pub(crate) struct ScopeHook<T: 'static>(OnceCell<fn() -> Option<Arc<T>>>);

impl<T: 'static> ScopeHook<T> {
    /// A hook nobody answers yet.
    pub(crate) const fn new() -> Self {
        ScopeHook(OnceCell::new())
    }

    /// Sets the function that finds the current scope's `T`; later calls keep the first.
    pub(crate) fn install(&self, current: fn() -> Option<Arc<T>>) {
        let _ = self.0.set(current);
    }

    /// The current scope's `T`, if a scope is entered on this thread.
    #[inline]
    pub(crate) fn current(&self) -> Option<Arc<T>> {
        self.0.get().and_then(|current| current())
    }
}
