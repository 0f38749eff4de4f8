//! [`BulkheadFuture`]: one call holding a bulkhead permit, polled in place.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use pin_project_lite::pin_project;
use tower_service::Service;

use crate::bulkhead::OwnedPermit;
use crate::{Bulkhead, Error, Rejection};

type Acquire = Pin<Box<dyn Future<Output = Result<OwnedPermit, Rejection>> + Send>>;

pin_project! {
    /// The response future of a [`BulkheadService`](super::BulkheadService). The permit is
    /// taken on its first poll, before the inner service is called, and freed when the call
    /// ends or the future is dropped. No allocation unless the pool is full and has a
    /// `max_wait` to wait out.
    ///
    /// ```
    /// use fusebox_runtime::tower::{BulkheadFuture, BulkheadLayer};
    /// use fusebox_runtime::Bulkhead;
    /// use tower::{service_fn, Layer, Service};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let layer = BulkheadLayer::new(Bulkhead::builder("bulkhead-future-doc").pool(1)).unwrap();
    /// let mut svc = layer.layer(service_fn(|x: u32| async move { Ok::<_, ()>(x) }));
    /// let idle = svc.call(1);
    /// assert_eq!(layer.bulkhead().in_flight(), 0, "nothing taken before the first poll");
    /// drop(idle);
    /// let fut: BulkheadFuture<_, u32, _> = svc.call(2);
    /// assert_eq!(fut.await.unwrap(), 2);
    /// # }
    /// ```
    pub struct BulkheadFuture<S, Req, SF> {
        #[pin]
        state: State<S, Req, SF>,
    }
}

pin_project! {
    #[project = StateProj]
    #[project_replace = StateOwned]
    enum State<S, Req, SF> {
        Start { bulkhead: Bulkhead, svc: S, req: Req },
        Waiting { acquire: Acquire, svc: S, req: Req },
        Call { #[pin] fut: SF, permit: OwnedPermit },
        Done,
    }
}

impl<S, Req, SF> BulkheadFuture<S, Req, SF> {
    pub(super) fn new(bulkhead: Bulkhead, svc: S, req: Req) -> Self {
        BulkheadFuture {
            state: State::Start { bulkhead, svc, req },
        }
    }
}

impl<S, Req> Future for BulkheadFuture<S, Req, S::Future>
where
    S: Service<Req>,
{
    type Output = Result<S::Response, Error<S::Error>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        loop {
            let next = match state.as_mut().project() {
                StateProj::Start { bulkhead, .. } => {
                    let slot = bulkhead.try_acquire_owned();
                    let waits = !bulkhead.config().max_wait().is_zero();
                    let StateOwned::Start { bulkhead, svc, req } =
                        state.as_mut().project_replace(State::Done)
                    else {
                        return Poll::Pending;
                    };
                    match slot {
                        Some(permit) => call(svc, req, permit),
                        // The slow path only: wait up to `max_wait` in the handle's own code.
                        None if waits => State::Waiting {
                            acquire: Box::pin(bulkhead.acquire_owned()),
                            svc,
                            req,
                        },
                        None => return Poll::Ready(Err(Error::Rejected(bulkhead.full()))),
                    }
                }
                StateProj::Waiting { acquire, .. } => {
                    let slot = ready!(acquire.as_mut().poll(cx));
                    let StateOwned::Waiting { svc, req, .. } =
                        state.as_mut().project_replace(State::Done)
                    else {
                        return Poll::Pending;
                    };
                    match slot {
                        Ok(permit) => call(svc, req, permit),
                        Err(full) => return Poll::Ready(Err(Error::Rejected(full))),
                    }
                }
                StateProj::Call { fut, .. } => {
                    let out = ready!(fut.poll(cx));
                    // Frees the slot now, not whenever the caller drops the finished future.
                    state.set(State::Done);
                    return Poll::Ready(out.map_err(Error::Failed));
                }
                // Polled after it finished: a contract violation of the caller's; never wakes.
                StateProj::Done => return Poll::Pending,
            };
            state.set(next);
        }
    }
}

/// Calls the service that was polled ready, now that a slot is held.
fn call<S: Service<Req>, Req>(mut svc: S, req: Req, permit: OwnedPermit) -> State<S, Req, S::Future> {
    State::Call {
        fut: svc.call(req),
        permit,
    }
}

impl<S, Req, SF> fmt::Debug for BulkheadFuture<S, Req, SF> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BulkheadFuture")
    }
}
