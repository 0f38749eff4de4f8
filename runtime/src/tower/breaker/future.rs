//! [`BreakerFuture`]: one call through the attributes' own code path.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tower_service::Service;

use crate::breaker::Breaker;
use crate::breaker::Completion;
use crate::bulkhead::Bulkhead;
use crate::error::Error;
use crate::tower::classify::Classify;
use crate::tower::retry::verdict;

type Boxed<T, E> = Pin<Box<dyn Future<Output = Result<T, Error<E>>> + Send>>;

/// The response future of a [`BreakerService`](super::BreakerService): the inner service's
/// result, or `Err(Error::Rejected(..))` when the breaker or its bulkhead refused the call or
/// its timeout cut it short. Dropping it cancels the call: the permit and any half-open slot
/// are freed and nothing is counted.
///
/// ```
/// use fusebox::tower::{BreakerFuture, BreakerLayer};
/// use fusebox::Breaker;
/// use tower::{service_fn, Layer, Service};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let mut svc = BreakerLayer::new(Breaker::builder("future-doc"))
///     .unwrap()
///     .layer(service_fn(|x: u32| async move { Ok::<_, ()>(x + 1) }));
/// let fut: BreakerFuture<u32, ()> = svc.call(1);
/// assert_eq!(fut.await.unwrap(), 2);
/// # }
/// ```
pub struct BreakerFuture<T, E> {
    inner: Boxed<T, E>,
}

impl<T: Send + 'static, E: Send + 'static> BreakerFuture<T, E> {
    pub(super) fn new<S, Req, C>(
        breaker: Breaker,
        bulkhead: Option<Bulkhead>,
        mut ready: S,
        req: Req,
        classify: C,
        unpolled: bool,
    ) -> Self
    where
        S: Service<Req, Response = T, Error = E> + Send + 'static,
        S::Future: Send,
        Req: Send + 'static,
        C: Classify<T, E> + Send + 'static,
    {
        BreakerFuture {
            inner: Box::pin(async move {
                // Lazy: the inner service is called only once the breaker and bulkhead admit;
                // polled ready first if `poll_ready` answered for an open breaker without it.
                let call = async move {
                    if unpolled {
                        std::future::poll_fn(|cx| ready.poll_ready(cx)).await?;
                    }
                    ready.call(req).await
                };
                let judged = move |r: &Result<T, E>| classify.outcome(r);
                let core = &breaker.0;
                match crate::breaker::run_classified(core, bulkhead.as_ref(), call, judged).await {
                    Completion::Ok(v) => Ok(v),
                    // An error not counted is still the caller's answer, as a counted one is;
                    // a retry around this layer is told which it was, and by which breaker
                    // (this one ends after any the inner service called: its word is last).
                    Completion::Ignored(e) => {
                        verdict::report(&breaker, false);
                        Err(Error::Failed(e))
                    }
                    Completion::Failed(Error::Failed(e)) => {
                        verdict::report(&breaker, true);
                        Err(Error::Failed(e))
                    }
                    Completion::Failed(Error::Rejected(r)) => Err(Error::Rejected(r)),
                }
            }),
        }
    }
}

impl<T, E> Future for BreakerFuture<T, E> {
    type Output = Result<T, Error<E>>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx)
    }
}

impl<T, E> fmt::Debug for BreakerFuture<T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BreakerFuture")
    }
}
