//! [`RetryService`]: the attempt loop of [`Retry::run`](crate::retry::Retry::run) around a
//! tower service.

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::task::{Context, Poll};

use tower_service::Service;

use super::layer::RetryHints;
use super::verdict;
use crate::error::Error;
use crate::registry::registry;
use crate::retry::Retry;

/// The service a [`RetryLayer`](super::RetryLayer) makes. Its future is boxed, like the
/// breaker's: it runs the very `async` loop of the builder API.
#[derive(Debug, Clone)]
pub struct RetryService<S, H = ()> {
    pub(super) inner: S,
    pub(super) retry: Retry,
    pub(super) hints: H,
}

impl<S, Req, E, H> Service<Req> for RetryService<S, H>
where
    S: Service<Req, Error = Error<E>> + Clone + Send + 'static,
    S::Future: Send,
    S::Response: Send,
    Req: Clone + Send + 'static,
    E: Send + 'static,
    H: RetryHints<E>,
{
    type Response = S::Response;
    type Error = Error<E>;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, Error<E>>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Req) -> Self::Future {
        // The service polled ready makes the first attempt; a clone stays here for the next
        // caller, and each retry waits for a clone's own readiness.
        let clone = self.inner.clone();
        let mut ready = Some(std::mem::replace(&mut self.inner, clone));
        let spare = self.inner.clone();
        let retry = self.retry.clone();
        let hints = self.hints.clone();
        Box::pin(async move {
            // A hint holds open the breaker the attempt went through (a keyed layer's key),
            // else the breaker of the retry's name (found only when a hint comes).
            let breaker = || verdict::breaker().or_else(|| registry().breaker(retry.name()));
            let hold = |d| breaker().is_some_and(|b| b.hold_open(d));
            // No retry into a breaker that surely refuses it (`Retry::resume`).
            let refusing = |wait| breaker().is_some_and(|b| b.refuses_for(wait));
            let judge = retry.judge(
                |e: &E| !verdict::uncounted() && hints.retry_on(e),
                |e: &E| {
                    if verdict::uncounted() {
                        None
                    } else {
                        hints.retry_after(e)
                    }
                },
            );
            // An error the breaker below did not count (`verdict`) is neither retried nor
            // read for a hint, as with `#[retry]`.
            let attempts = retry.run_judged(
                move || {
                    let first = ready.take();
                    let mut svc = first.clone().unwrap_or_else(|| spare.clone());
                    let req = req.clone();
                    async move {
                        verdict::clear();
                        if first.is_none() {
                            poll_fn(|cx| svc.poll_ready(cx)).await?;
                        }
                        svc.call(req).await
                    }
                },
                judge,
                hold,
                refusing,
            );
            verdict::scope(attempts).await
        })
    }
}
