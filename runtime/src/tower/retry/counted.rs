//! Whether an attempt's error was one its breaker counted: a [`BreakerFuture`] tells the
//! [`RetryService`] around it, which retries counted failures only, as `#[retry]` does (an
//! error the classifier calls a success, a 404, or ignores, a request refused as malformed,
//! is the caller's answer, not a failure worth another try).
//!
//! A task-local, because the two layers meet only through the service between them, whose
//! error type (`Error<E>`) has no room for the verdict. A layer in between that runs the call
//! on another task (`tower::buffer::Buffer`) hides it: the retry then sees every
//! `Error::Failed` as counted, what it did before.
//!
//! [`BreakerFuture`]: crate::tower::BreakerFuture
//! [`RetryService`]: super::RetryService

use std::cell::Cell;
use std::future::Future;

tokio::task_local! {
    /// Set by a breaker's future whose call ended with an error it did not count; the last
    /// breaker to end (the one the retry wraps) has the last word.
    static UNCOUNTED: Cell<bool>;
}

/// Runs a retry's attempts (and its verdicts on them) where breaker futures can report.
pub(crate) fn scope<F: Future>(f: F) -> impl Future<Output = F::Output> {
    UNCOUNTED.scope(Cell::new(false), f)
}

/// An attempt starts: nothing reported yet.
pub(crate) fn clear() {
    let _ = UNCOUNTED.try_with(|c| c.set(false));
}

/// A breaker's call ended with an error, `counted` as a failure or not (excluded or
/// ignored). Outside a retry's scope it does nothing.
pub(crate) fn report(counted: bool) {
    let _ = UNCOUNTED.try_with(|c| c.set(!counted));
}

/// Whether the attempt that just ended reported an uncounted error.
pub(crate) fn uncounted() -> bool {
    UNCOUNTED.try_with(Cell::get).unwrap_or(false)
}
