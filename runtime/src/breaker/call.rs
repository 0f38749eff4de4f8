//! Running a call through a breaker (and optionally a bulkhead), always in one order:
//! breaker admission, then bulkhead permit, then timeout, then the call. So an open breaker
//! never takes a bulkhead slot, and a full bulkhead is not a failure of the dependency
//! (ARCHITECTURE.md follows one call along this path).

use std::future::Future;

use super::core::Core;
use super::outcome::Outcome;
use super::permit::{Outcome as Ended, Permit};
use crate::bulkhead::{Bulkhead, BulkheadPermit};
use crate::error::{Error, Rejection};

/// How a call through fusebox ended, as the generated code needs to know it.
#[derive(Debug)]
pub enum Completion<T, E> {
    /// The call succeeded.
    Ok(T),
    /// The call returned an error that was not counted as a failure (excluded by the failure
    /// predicate, or classified ignored): it goes back to the caller as is, without the
    /// fallback.
    Ignored(E),
    /// Rejected, timed out, or a counted failure: what a fallback handles.
    Failed(Error<E>),
}

impl<T, E> Completion<T, E> {
    /// Back to a plain `Result`, uncounted errors as `Error::Failed`.
    pub fn into_result(self) -> Result<T, Error<E>> {
        match self {
            Completion::Ok(v) => Ok(v),
            Completion::Ignored(e) => Err(Error::Failed(e)),
            Completion::Failed(e) => Err(e),
        }
    }
}

/// A call whose errors count as failures when `is_failure` says so, and as successes
/// otherwise (today's `failure` predicate).
pub(crate) async fn run<T, E, F, C>(
    core: &Core,
    bulkhead: Option<&Bulkhead>,
    fut: F,
    is_failure: C,
) -> Completion<T, E>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&E) -> bool,
{
    let classify = |r: &Result<T, E>| match r {
        Err(e) if is_failure(e) => Outcome::Failure,
        _ => Outcome::Success,
    };
    run_classified(core, bulkhead, fut, classify).await
}

/// The one code path every call takes: builder API and generated code alike.
pub(crate) async fn run_classified<T, E, F, C>(
    core: &Core,
    bulkhead: Option<&Bulkhead>,
    fut: F,
    classify: C,
) -> Completion<T, E>
where
    F: Future<Output = Result<T, E>>,
    C: FnOnce(&Result<T, E>) -> Outcome,
{
    // Live settings (`live.rs`) are held here for the call, and the permit reads them by
    // reference; `None` on the plain closed path.
    let (admission, live) = match core.admit() {
        Ok(a) => a.take_live(),
        Err(r) => return Completion::Failed(Error::Rejected(r)),
    };
    let layer = if live { core.live.get() } else { None };
    let mut permit = Permit::under(core, admission, layer.as_deref());
    // An open breaker returned above, so it never takes a bulkhead permit.
    let Some(b) = bulkhead else {
        // No bulkhead: the call is driven as is, without the slot's wrapper around it.
        let ended = permit.drive(fut).await;
        return settle(core, permit, ended, classify);
    };
    let slot = match b.try_acquire_now() {
        Some(p) => Ok(p),
        // Waiting (up to `max_wait`) is boxed: its state (a timeout and a `Notified`, 240
        // bytes) would otherwise sit in every call's future, which each call moves.
        None => {
            // Its own statement: a temporary of the awaited expression would be kept across
            // the await, and the future would keep the 240 bytes after all.
            let waiting = Box::pin(b.acquire_untimed());
            waiting.await
        }
    };
    let slot = match slot {
        Ok(p) => p,
        Err(r) => {
            // Every slot held by one of our calls already slow: the refusal is slowness the
            // window would otherwise never see (issue 26, derived slow rule only).
            let behind_slow = core.config().settings().refusals_count_as_slow()
                && core.slow_in_flight() >= b.pool() as u64;
            permit.finish(if behind_slow {
                Ended::FullBehindSlow
            } else {
                Ended::BulkheadFull
            });
            return Completion::Failed(Error::Rejected(r));
        }
    };
    let ended = permit.drive(BulkheadPermit::run(Some(&slot), fut)).await;
    settle(core, permit, ended, classify)
}

/// Records how a driven call ended and turns it into its `Completion`.
#[inline]
fn settle<T, E, C>(
    core: &Core,
    permit: Permit<'_>,
    ended: Result<Result<T, E>, std::time::Duration>,
    classify: C,
) -> Completion<T, E>
where
    C: FnOnce(&Result<T, E>) -> Outcome,
{
    let result = match ended {
        Ok(r) => r,
        Err(after) => {
            permit.finish(Ended::TimedOut);
            return Completion::Failed(Error::Rejected(Rejection::TimedOut {
                name: core.config().name.clone(),
                after,
            }));
        }
    };
    let outcome = classify(&result);
    match (result, outcome) {
        (Ok(v), o) => {
            // An `Ok` counted as a failure is still the caller's answer: no fallback.
            permit.finish(match o {
                Outcome::Success => Ended::Success,
                Outcome::Failure => Ended::Failure,
                Outcome::Ignored => Ended::Ignored,
            });
            Completion::Ok(v)
        }
        (Err(e), Outcome::Failure) => {
            permit.finish(Ended::Failure);
            Completion::Failed(Error::Failed(e))
        }
        (Err(e), Outcome::Success) => {
            permit.finish(Ended::Excluded);
            Completion::Ignored(e)
        }
        (Err(e), Outcome::Ignored) => {
            permit.finish(Ended::Ignored);
            Completion::Ignored(e)
        }
    }
}
