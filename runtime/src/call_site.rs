//! What an annotated function's call site does at run time: find its breaker and bulkhead
//! once (cached in the site's `static`), then run each call through them. Reached by the
//! generated code through `__private`; the one call path itself is `breaker::call`.

use std::future::Future;

use once_cell::sync::OnceCell;

use crate::breaker::{Breaker, Completion};
use crate::bulkhead::{Bulkhead, BulkheadConfig, BulkheadPermit};
use crate::registry::registry;
use crate::settings::BreakerConfig;

/// A call site's breaker: registered once and cached in the site's `static`, so a static
/// name costs no lookup per call. Inside a test scope (feature `testing`) the scope's
/// breaker of that name is used instead, so parallel tests never share state.
#[inline]
pub fn static_breaker(
    cell: &'static OnceCell<Breaker>,
    config: impl FnOnce() -> BreakerConfig,
) -> Site<'static, Breaker> {
    #[cfg(feature = "testing")]
    if registry().is_scoped() {
        return Site::Scoped(registry().register(config()));
    }
    Site::Cached(cell.get_or_init(|| registry().register(config())))
}

/// A call site's bulkhead, cached like [`static_breaker`].
#[inline]
pub fn static_bulkhead(
    cell: &'static OnceCell<Bulkhead>,
    config: impl FnOnce() -> BulkheadConfig,
) -> Site<'static, Bulkhead> {
    #[cfg(feature = "testing")]
    if registry().is_scoped() {
        return Site::Scoped(registry().register_bulkhead(config()));
    }
    Site::Cached(cell.get_or_init(|| registry().register_bulkhead(config())))
}

/// A cached handle, or (in a test scope) the scope's own.
pub enum Site<'a, T> {
    /// The call site's cached handle.
    Cached(&'a T),
    /// A test scope's handle.
    Scoped(T),
}

impl<T> std::ops::Deref for Site<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        match self {
            Site::Cached(t) => t,
            Site::Scoped(t) => t,
        }
    }
}

/// Runs one call of an annotated function with a breaker (a bulkhead alone goes through
/// [`run_bulkhead`]).
pub async fn run<T, E, F, C>(
    breaker: &Breaker,
    bulkhead: Option<&Bulkhead>,
    fut: F,
    is_failure: C,
) -> Completion<T, E>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&E) -> bool,
{
    crate::breaker::run(&breaker.0, bulkhead, fut, is_failure).await
}

/// Runs one call of an annotated function whose results are classified three ways
/// (`ignore`, `failure_if_ok`).
pub async fn run_classified<T, E, F, C>(
    breaker: &Breaker,
    bulkhead: Option<&Bulkhead>,
    fut: F,
    classify: C,
) -> Completion<T, E>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&Result<T, E>) -> crate::breaker::Outcome,
{
    crate::breaker::run_classified(&breaker.0, bulkhead, fut, classify).await
}

/// Runs one call of a function with a bulkhead and no breaker. Its own entry point, so the
/// call future holds only the bulkhead's permit and the call (no breaker or timer state):
/// generated code moves that future, and a smaller one moves cheaper.
pub async fn run_bulkhead<T, E, F>(bulkhead: Option<&Bulkhead>, fut: F) -> Completion<T, E>
where
    F: Future<Output = Result<T, E>>,
{
    let slot = match bulkhead {
        Some(b) => match b.acquire_untimed().await {
            Ok(p) => Some(p),
            Err(r) => return Completion::Failed(crate::error::Error::Rejected(r)),
        },
        None => None,
    };
    // Without a breaker, the function's own errors are not fusebox's to judge.
    match BulkheadPermit::run(slot.as_ref(), fut).await {
        Ok(v) => Completion::Ok(v),
        Err(e) => Completion::Ignored(e),
    }
}
