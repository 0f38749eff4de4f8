//! [`FallbackLayer`]: answers a service's errors, a fusebox rejection included, with a value.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

/// A [`Layer`] that turns the inner service's errors into answers: `fallback(err)` is called
/// for every `Err` (a readiness error included) and its future's result is the response. Over a
/// [`BreakerLayer`](super::BreakerLayer) `err` is a [`crate::Error<E>`], so an open breaker,
/// a full bulkhead or a timeout can answer with a default, a cached value or a `503`, the
/// attribute's `fallback = ...` in tower's shape. The fallback's error type is the service's
/// error type, so `Infallible` makes an axum-ready service.
///
/// A response that the breaker classified as a failure is an `Ok` and passes through unchanged.
///
/// ```
/// use std::convert::Infallible;
/// use fusebox::tower::{BreakerLayer, FallbackLayer};
/// use fusebox::{Breaker, Error};
/// use tower::{service_fn, Layer, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let breaker = BreakerLayer::new(Breaker::builder("fallback-doc")).unwrap();
/// breaker.breaker().force_open();
/// let fallback = FallbackLayer::new(|err: Error<&'static str>| async move {
///     Ok::<_, Infallible>(match err {
///         Error::Rejected(_) => "cached price".to_owned(),
///         Error::Failed(e) => format!("unavailable: {e}"),
///     })
/// });
/// let prices = fallback.layer(breaker.layer(service_fn(|sku: u32| async move {
///     Ok::<_, &str>(format!("fresh price of {sku}"))
/// })));
/// assert_eq!(prices.oneshot(7).await.unwrap(), "cached price");
/// # }
/// ```
#[derive(Clone)]
#[must_use]
pub struct FallbackLayer<F> {
    fallback: F,
}

impl<F> FallbackLayer<F> {
    /// A layer answering errors with `fallback(err).await`.
    ///
    /// ```
    /// use fusebox::tower::FallbackLayer;
    /// let layer = FallbackLayer::new(|_err: fusebox::Error<()>| async { Ok::<u16, ()>(503) });
    /// # let _ = layer;
    /// ```
    pub fn new(fallback: F) -> Self {
        FallbackLayer { fallback }
    }
}

impl<S, F: Clone> Layer<S> for FallbackLayer<F> {
    type Service = Fallback<S, F>;

    fn layer(&self, inner: S) -> Self::Service {
        Fallback {
            inner,
            fallback: self.fallback.clone(),
        }
    }
}

impl<F> fmt::Debug for FallbackLayer<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FallbackLayer")
    }
}

/// The service a [`FallbackLayer`] makes. Its `poll_ready` is always ready: each call drives a
/// clone of the inner service to readiness itself, so that a readiness error reaches the
/// fallback too (as axum's `HandleError` does).
///
/// ```
/// use fusebox::tower::FallbackLayer;
/// use tower::{service_fn, Layer, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let svc = FallbackLayer::new(|_err: &str| async { Ok::<_, ()>(0) })
///     .layer(service_fn(|x: u32| async move { if x > 0 { Ok(x) } else { Err("zero") } }));
/// assert_eq!(svc.clone().oneshot(3).await, Ok(3));
/// assert_eq!(svc.oneshot(0).await, Ok(0));
/// # }
/// ```
#[derive(Clone)]
pub struct Fallback<S, F> {
    inner: S,
    fallback: F,
}

impl<S, F> fmt::Debug for Fallback<S, F>
where
    S: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fallback")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<S, F, Req, Fut, E2> Service<Req> for Fallback<S, F>
where
    S: Service<Req> + Clone,
    F: Fn(S::Error) -> Fut + Clone,
    Fut: Future<Output = Result<S::Response, E2>>,
{
    type Response = S::Response;
    type Error = E2;
    type Future = FallbackFuture<S, Req, S::Future, F, Fut>;

    #[inline]
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), E2>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Req) -> Self::Future {
        FallbackFuture {
            state: State::Ready {
                svc: self.inner.clone(),
                req,
                fallback: self.fallback.clone(),
            },
        }
    }
}

pin_project! {
    /// The response future of a [`Fallback`]: readiness, then the call, then, on an error,
    /// the fallback. No allocation: each step is polled in place.
    ///
    /// ```
    /// use fusebox::tower::{FallbackFuture, FallbackLayer};
    /// use tower::{service_fn, Layer, Service};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let mut svc = FallbackLayer::new(|_e: ()| async { Ok::<u32, ()>(0) })
    ///     .layer(service_fn(|x: u32| async move { Err::<u32, ()>(()) }));
    /// let fut = svc.call(1);
    /// assert_eq!(fut.await, Ok(0));
    /// # }
    /// ```
    pub struct FallbackFuture<S, Req, SF, F, Fut> {
        #[pin]
        state: State<S, Req, SF, F, Fut>,
    }
}

pin_project! {
    #[project = StateProj]
    #[project_replace = StateOwned]
    enum State<S, Req, SF, F, Fut> {
        Ready { svc: S, req: Req, fallback: F },
        Call { #[pin] fut: SF, fallback: F },
        Fallback { #[pin] fut: Fut },
        Done,
    }
}

impl<S, Req, F, Fut, E2> Future for FallbackFuture<S, Req, S::Future, F, Fut>
where
    S: Service<Req>,
    F: FnOnce(S::Error) -> Fut,
    Fut: Future<Output = Result<S::Response, E2>>,
{
    type Output = Result<S::Response, E2>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        loop {
            let next = match state.as_mut().project() {
                StateProj::Ready { svc, .. } => match svc.poll_ready(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(ready) => match state.as_mut().project_replace(State::Done) {
                        StateOwned::Ready {
                            mut svc,
                            req,
                            fallback,
                        } => match ready {
                            Ok(()) => State::Call {
                                fut: svc.call(req),
                                fallback,
                            },
                            Err(e) => State::Fallback { fut: fallback(e) },
                        },
                        _ => State::Done,
                    },
                },
                StateProj::Call { fut, .. } => match fut.poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Ok(v)) => {
                        state.set(State::Done);
                        return Poll::Ready(Ok(v));
                    }
                    Poll::Ready(Err(e)) => match state.as_mut().project_replace(State::Done) {
                        StateOwned::Call { fallback, .. } => State::Fallback { fut: fallback(e) },
                        _ => State::Done,
                    },
                },
                StateProj::Fallback { fut } => {
                    let out = std::task::ready!(fut.poll(cx));
                    state.set(State::Done);
                    return Poll::Ready(out);
                }
                // Polled after it finished: a contract violation of the caller's; never wakes.
                StateProj::Done => return Poll::Pending,
            };
            state.set(next);
        }
    }
}

impl<S, Req, SF, F, Fut> fmt::Debug for FallbackFuture<S, Req, SF, F, Fut> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FallbackFuture")
    }
}
