//! What `#[retry]`'s expansion calls: the arguments' per-attempt copies, the call site's
//! policy, the first attempt's start and the boxed retries after it.

use std::future::Future;
use std::pin::Pin;

use once_cell::sync::OnceCell;

use crate::breaker::Breaker;
use crate::error::Error;
#[cfg(feature = "testing")]
use crate::registry::registry;
use crate::retry::{Retry, RetryBuilder};

/// What `#[retry]` needs of a by-value argument: each attempt runs the body again, with a
/// fresh copy of the arguments, so each must be `Clone` (a reference is copied).
#[diagnostic::on_unimplemented(
    message = "`#[retry]` runs the body once per attempt, so each argument taken by value must be `Clone`, and `{Self}` is not",
    label = "cloned for every attempt",
    note = "derive or implement `Clone` for `{Self}`, take it by reference (`&{Self}`), or wrap it in an `Arc`"
)]
pub trait RetryArgument: Sized {
    /// The copy one attempt gets.
    fn retry_clone(&self) -> Self;
}

impl<T: Clone> RetryArgument for T {
    #[inline]
    fn retry_clone(&self) -> Self {
        self.clone()
    }
}

/// One attempt's end as a retry sees it: `Ok(Ok(v))` a success, `Ok(Err(e))` an error the
/// breaker does not count (returned as is, never retried), `Err(e)` what may be retried.
/// Without a breaker (`counted_only` false), every `Err` of the body may be retried.
#[inline]
pub fn retry_attempt<T, E>(
    c: crate::breaker::Completion<T, E>,
    counted_only: bool,
) -> Result<Result<T, E>, Error<E>> {
    match c {
        crate::breaker::Completion::Ok(v) => Ok(Ok(v)),
        crate::breaker::Completion::Ignored(e) if counted_only => Ok(Err(e)),
        crate::breaker::Completion::Ignored(e) => Err(Error::Failed(e)),
        crate::breaker::Completion::Failed(e) => Err(e),
    }
}

/// The call site's retry policy, built once; its settings were checked at compile time. Inside
/// a test scope (feature `testing`) it is built for the call, on the scope's budgets, so
/// parallel tests never draw on one budget.
#[inline]
pub fn static_retry(
    cell: &'static OnceCell<Option<Retry>>,
    builder: impl FnOnce() -> RetryBuilder,
) -> RetrySite {
    #[cfg(feature = "testing")]
    if registry().is_scoped() {
        return RetrySite(
            builder()
                .build()
                .ok()
                .map(|r| SiteRetry::Scoped(Box::new(r))),
        );
    }
    RetrySite(
        cell.get_or_init(|| builder().build().ok())
            .as_ref()
            .map(SiteRetry::Cached),
    )
}

/// A call site's policy: a pointer either way, so a call's future stays small.
pub struct RetrySite(Option<SiteRetry>);

enum SiteRetry {
    Cached(&'static Retry),
    #[cfg(feature = "testing")]
    Scoped(Box<Retry>),
}

impl RetrySite {
    /// The policy, if it could be built (always, for checked settings).
    #[inline]
    pub fn get(&self) -> Option<&Retry> {
        match &self.0 {
            Some(SiteRetry::Cached(r)) => Some(r),
            #[cfg(feature = "testing")]
            Some(SiteRetry::Scoped(r)) => Some(r),
            None => None,
        }
    }
}

/// What a retry through a breaker ends with: [`retry_attempt`]'s reading of the last attempt.
pub type Attempted<T, E> = Result<Result<T, E>, Error<E>>;

/// A call of a `#[retry]` function starts: the budget's deposit, and the clock only for a
/// deadline, returned for [`retry_rest`]. The generated code then awaits the first attempt
/// itself, inline, so a first success costs this and one branch more than the same call
/// without a retry; the retries are [`retry_rest`]'s, boxed, on the failure path.
#[inline]
pub fn retry_begin(retry: Option<&Retry>) -> Option<tokio::time::Instant> {
    retry.and_then(Retry::begin)
}

/// The retries after a first attempt through the breaker (and bulkhead) failed with `err`:
/// each `attempt` a fresh call, whose `Completion` is read as [`retry_attempt`] does;
/// `counted_only`: whether a breaker judges the attempts. A `retry_after` hint holds
/// `breaker` open ([`Breaker::hold_open`]). Without a policy (never for checked settings),
/// `err` is the answer.
#[allow(clippy::too_many_arguments)]
pub fn retry_rest<'a, T, E, F, Fut, R, A>(
    retry: Option<&'a Retry>,
    breaker: Option<&'a Breaker>,
    counted_only: bool,
    deadline: Option<tokio::time::Instant>,
    err: Error<E>,
    mut attempt: F,
    retry_on: R,
    retry_after: A,
) -> Pin<Box<impl Future<Output = Attempted<T, E>> + 'a>>
where
    F: FnMut() -> Fut + 'a,
    Fut: Future<Output = crate::breaker::Completion<T, E>> + 'a,
    R: Fn(&E) -> bool + 'a,
    A: Fn(&E) -> Option<std::time::Duration> + 'a,
    T: 'a,
    E: 'a,
{
    Box::pin(async move {
        let Some(r) = retry else {
            return Err(err);
        };
        let again = move || {
            let call = attempt();
            async move { retry_attempt(call.await, counted_only) }
        };
        let judge = r.judge(retry_on, retry_after);
        let hold = |d| breaker.is_some_and(|b| b.hold_open(d));
        let refusing = |wait| breaker.is_some_and(|b| b.refuses_for(wait));
        r.resume(deadline, err, again, judge, hold, refusing).await
    })
}

/// [`retry_rest`] for `#[retry]` alone: the body's own errors, retried as they are (no
/// refusal can come back).
pub fn retry_rest_plain<'a, T, E, F, Fut, R, A>(
    retry: Option<&'a Retry>,
    deadline: Option<tokio::time::Instant>,
    err: E,
    attempt: F,
    retry_on: R,
    retry_after: A,
) -> Pin<Box<impl Future<Output = Result<T, E>> + 'a>>
where
    F: FnMut() -> Fut + 'a,
    Fut: Future<Output = Result<T, E>> + 'a,
    R: Fn(&E) -> bool + 'a,
    A: Fn(&E) -> Option<std::time::Duration> + 'a,
    T: 'a,
    E: 'a,
{
    Box::pin(async move {
        let Some(r) = retry else {
            return Err(err);
        };
        let judge = move |e: &E| (retry_on(e), retry_after(e));
        r.resume(deadline, err, attempt, judge, |_| false, |_| false)
            .await
    })
}

/// The error type of a function's `Result`, so `retry_on` and `retry_after` are checked
/// against it at their own path.
pub trait ResultErr {
    /// `E` of `Result<T, E>`.
    type Err;
}

impl<T, E> ResultErr for Result<T, E> {
    type Err = E;
}

/// `retry_on = path`, typed by the function's return type `R`.
#[inline]
pub fn retry_on_for<R: ResultErr>(f: fn(&R::Err) -> bool) -> fn(&R::Err) -> bool {
    f
}

/// `retry_after = path`, typed by the function's return type `R`.
#[inline]
pub fn retry_after_for<R: ResultErr>(
    f: fn(&R::Err) -> Option<std::time::Duration>,
) -> fn(&R::Err) -> Option<std::time::Duration> {
    f
}
