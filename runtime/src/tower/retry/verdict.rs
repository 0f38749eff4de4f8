//! What the breaker an attempt went through said of its error: counted as a failure or not,
//! and which breaker it was. A [`BreakerFuture`] tells the [`RetryService`] around it, which
//! - retries counted failures only, as `#[retry]` does (an error the classifier calls a
//!   success, a 404, or ignores, a request refused as malformed, is the caller's answer);
//! - holds *that* breaker open for a `retry_after` hint: for a keyed layer, the key the
//!   request went to, not the name (one host rate-limiting is not every host).
//!
//! A task-local, because the two layers meet only through the service between them, whose
//! error type (`Error<E>`) has no room for the verdict. A layer in between that runs the call
//! on another task (`tower::buffer::Buffer`) hides it: the retry then sees every
//! `Error::Failed` as counted and holds the breaker of its own name.
//!
//! [`BreakerFuture`]: crate::tower::BreakerFuture
//! [`RetryService`]: super::RetryService

use std::cell::RefCell;
use std::future::Future;

use crate::breaker::Breaker;

/// The last report of the current attempt.
#[derive(Default)]
struct Verdict {
    uncounted: bool,
    breaker: Option<Breaker>,
}

tokio::task_local! {
    /// Written by a breaker's future whose call ended with an error; the last breaker to
    /// end (the one the retry wraps) has the last word.
    static LAST: RefCell<Verdict>;
}

/// Runs a retry's attempts (and its verdicts on them) where breaker futures can report.
pub(crate) fn scope<F: Future>(f: F) -> impl Future<Output = F::Output> {
    LAST.scope(RefCell::new(Verdict::default()), f)
}

/// An attempt starts: nothing reported yet.
pub(crate) fn clear() {
    let _ = LAST.try_with(|v| *v.borrow_mut() = Verdict::default());
}

/// `breaker`'s call ended with an error, `counted` as a failure or not (excluded or
/// ignored). Outside a retry's scope it does nothing (and clones nothing).
pub(crate) fn report(breaker: &Breaker, counted: bool) {
    let _ = LAST.try_with(|v| {
        *v.borrow_mut() = Verdict {
            uncounted: !counted,
            breaker: Some(breaker.clone()),
        }
    });
}

/// Whether the attempt that just ended reported an uncounted error.
pub(crate) fn uncounted() -> bool {
    LAST.try_with(|v| v.borrow().uncounted).unwrap_or(false)
}

/// The breaker the attempt that just ended went through, if it reported.
pub(crate) fn breaker() -> Option<Breaker> {
    LAST.try_with(|v| v.borrow().breaker.clone()).ok().flatten()
}
