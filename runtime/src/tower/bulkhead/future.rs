//! [`BulkheadFuture`]: one call holding a bulkhead permit, polled in place.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use pin_project_lite::pin_project;
use tower_service::Service;

use crate::bulkhead::OwnedPermit;
use crate::error::Error;
use crate::error::Rejection;

type Acquire = Pin<Box<dyn Future<Output = Result<OwnedPermit, Rejection>> + Send>>;

pin_project! {
    /// The response future of a [`BulkheadService`](super::BulkheadService): the inner call,
    /// holding its slot until it ends or the future is dropped; or a rejection. No allocation,
    /// unless the pool is full and has a `max_wait` to wait out.
    ///
    /// ```
    /// use fusebox::tower::{BulkheadFuture, BulkheadLayer};
    /// use fusebox::Bulkhead;
    /// use tower::{service_fn, Layer, Service};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let layer = BulkheadLayer::new(Bulkhead::builder("bulkhead-future-doc").pool(1)).unwrap();
    /// let mut svc = layer.layer(service_fn(|x: u32| async move { Ok::<_, ()>(x) }));
    /// let pending = svc.call(1);
    /// assert_eq!(layer.bulkhead().in_flight(), 1, "held from `call` on");
    /// drop(pending);
    /// assert_eq!(layer.bulkhead().in_flight(), 0, "freed by the drop");
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
        Call { #[pin] fut: SF, permit: OwnedPermit },
        Waiting { acquire: Acquire, svc: S, req: Req },
        Rejected { rejection: Rejection },
        Done,
    }
}

impl<S, Req, SF> BulkheadFuture<S, Req, SF> {
    pub(super) fn call(fut: SF, permit: OwnedPermit) -> Self {
        BulkheadFuture {
            state: State::Call { fut, permit },
        }
    }

    pub(super) fn waiting(acquire: Acquire, svc: S, req: Req) -> Self {
        BulkheadFuture {
            state: State::Waiting { acquire, svc, req },
        }
    }

    pub(super) fn rejected(rejection: Rejection) -> Self {
        BulkheadFuture {
            state: State::Rejected { rejection },
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
            match state.as_mut().project() {
                StateProj::Call { fut, .. } => {
                    let out = ready!(fut.poll(cx));
                    // Frees the slot now, not whenever the caller drops the finished future.
                    state.set(State::Done);
                    return Poll::Ready(out.map_err(Error::Failed));
                }
                StateProj::Waiting { acquire, .. } => {
                    let slot = ready!(acquire.as_mut().poll(cx));
                    let StateOwned::Waiting { mut svc, req, .. } =
                        state.as_mut().project_replace(State::Done)
                    else {
                        return Poll::Pending;
                    };
                    match slot {
                        Ok(permit) => state.set(State::Call {
                            fut: svc.call(req),
                            permit,
                        }),
                        Err(full) => return Poll::Ready(Err(Error::Rejected(full))),
                    }
                }
                StateProj::Rejected { .. } => {
                    return match state.as_mut().project_replace(State::Done) {
                        StateOwned::Rejected { rejection } => {
                            Poll::Ready(Err(Error::Rejected(rejection)))
                        }
                        _ => Poll::Pending,
                    }
                }
                // Polled after it finished: a contract violation of the caller's; never wakes.
                StateProj::Done => return Poll::Pending,
            }
        }
    }
}

impl<S, Req, SF> fmt::Debug for BulkheadFuture<S, Req, SF> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BulkheadFuture")
    }
}
