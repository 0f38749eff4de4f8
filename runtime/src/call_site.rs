//! What an annotated function's call site does at run time: find its breaker and bulkhead
//! once (cached in the site's `static`), then run each call through them. Reached by the
//! generated code through `__private`; the one call path itself is `breaker::call`.

use std::future::Future;

use once_cell::sync::OnceCell;

use crate::breaker::{Breaker, Completion, Same};
use crate::bulkhead::{Answer, Bulkhead, BulkheadCall, BulkheadConfig};
use crate::registry::{registry, KeyedBreaker};
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
        let b = registry().register(config());
        b.0.first_used();
        return Site::Scoped(b);
    }
    Site::Cached(cell.get_or_init(|| {
        let b = registry().register(config());
        b.0.first_used();
        b
    }))
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
pub fn run<'a, T, E, F, C>(
    breaker: &'a Breaker,
    bulkhead: Option<&'a Bulkhead>,
    fut: F,
    is_failure: C,
) -> impl Future<Output = Completion<T, E>> + use<'a, T, E, F, C>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&E) -> bool,
{
    crate::breaker::run(&breaker.0, bulkhead, fut, is_failure, Same)
}

/// Runs one call of an annotated function whose results are classified three ways
/// (`ignore`, `failure_if_ok`).
pub fn run_classified<'a, T, E, F, C>(
    breaker: &'a Breaker,
    bulkhead: Option<&'a Bulkhead>,
    fut: F,
    classify: C,
) -> impl Future<Output = Completion<T, E>> + use<'a, T, E, F, C>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&Result<T, E>) -> crate::breaker::Outcome,
{
    crate::breaker::run_classified(&breaker.0, bulkhead, fut, classify)
}

/// Runs one call of an annotated function with a keyed breaker (`key = ...`): the key's
/// breaker is found at the call's first poll, borrowed from this thread's recent keys for
/// that poll, and kept in `breaker` only if the call goes on past it (`breaker/keyed_call.rs`).
pub fn run_keyed<'a, T, E, F, C>(
    breaker: &'a KeyedBreaker,
    bulkhead: Option<&'a Bulkhead>,
    fut: F,
    is_failure: C,
) -> impl Future<Output = Completion<T, E>> + use<'a, T, E, F, C>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&E) -> bool,
{
    crate::breaker::run_keyed(breaker, bulkhead, fut, is_failure, Same)
}

/// [`run_keyed`] for results classified three ways (`ignore`, `failure_if_ok`).
pub fn run_keyed_classified<'a, T, E, F, C>(
    breaker: &'a KeyedBreaker,
    bulkhead: Option<&'a Bulkhead>,
    fut: F,
    classify: C,
) -> impl Future<Output = Completion<T, E>> + use<'a, T, E, F, C>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&Result<T, E>) -> crate::breaker::Outcome,
{
    crate::breaker::run_keyed_classified(breaker, bulkhead, fut, classify, Same)
}

/// Runs one call of a function with a bulkhead and no breaker. Its own entry point, so the
/// call future holds only the bulkhead's slot and the call (no breaker or timer state):
/// generated code moves that future, and a smaller one moves cheaper.
pub fn run_bulkhead<'a, T, E, F>(
    bulkhead: Option<&'a Bulkhead>,
    fut: F,
) -> impl Future<Output = Completion<T, E>> + use<'a, T, E, F>
where
    F: Future<Output = Result<T, E>>,
{
    BulkheadCall::<F, AsCompletion>::new(bulkhead, fut)
}

/// A bulkhead-only call's answer as generated code takes it.
struct AsCompletion;

impl<T, E> Answer<Result<T, E>> for AsCompletion {
    type Output = Completion<T, E>;
    #[inline]
    fn ran(r: Result<T, E>) -> Completion<T, E> {
        // Without a breaker, the function's own errors are not fusebox's to judge.
        match r {
            Ok(v) => Completion::Ok(v),
            Err(e) => Completion::Ignored(e),
        }
    }
    #[inline]
    fn refused(r: crate::error::Rejection) -> Completion<T, E> {
        Completion::Failed(crate::error::Error::Rejected(r))
    }
}
