//! [`BulkheadFuture`]: one call holding a bulkhead permit.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tower_service::Service;

use crate::{Bulkhead, Completion, Error};

type Boxed<T, E> = Pin<Box<dyn Future<Output = Result<T, Error<E>>> + Send>>;

/// The response future of a [`BulkheadService`](super::BulkheadService). The permit is taken
/// on its first poll and freed when the call ends or the future is dropped.
///
/// ```
/// use fusebox_runtime::tower::{BulkheadFuture, BulkheadLayer};
/// use fusebox_runtime::Bulkhead;
/// use tower::{service_fn, Layer, Service};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let layer = BulkheadLayer::new(Bulkhead::builder("bulkhead-future-doc").pool(1)).unwrap();
/// let mut svc = layer.layer(service_fn(|x: u32| async move { Ok::<_, ()>(x) }));
/// let idle: BulkheadFuture<u32, ()> = svc.call(1);
/// assert_eq!(layer.bulkhead().in_flight(), 0, "nothing taken before the first poll");
/// drop(idle);
/// assert_eq!(svc.call(2).await.unwrap(), 2);
/// # }
/// ```
pub struct BulkheadFuture<T, E> {
    inner: Boxed<T, E>,
}

impl<T: Send + 'static, E: Send + 'static> BulkheadFuture<T, E> {
    pub(super) fn new<S, Req>(bulkhead: Bulkhead, mut ready: S, req: Req) -> Self
    where
        S: Service<Req, Response = T, Error = E> + Send + 'static,
        S::Future: Send,
        Req: Send + 'static,
    {
        BulkheadFuture {
            inner: Box::pin(async move {
                // Lazy: the inner service is called only once a slot is held.
                let call = async move { ready.call(req).await };
                match crate::__private::run(None, Some(&bulkhead), call, |_| true).await {
                    Completion::Ok(v) => Ok(v),
                    Completion::Ignored(e) => Err(Error::Failed(e)),
                    Completion::Failed(e) => Err(e),
                }
            }),
        }
    }
}

impl<T, E> Future for BulkheadFuture<T, E> {
    type Output = Result<T, Error<E>>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx)
    }
}

impl<T, E> fmt::Debug for BulkheadFuture<T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BulkheadFuture")
    }
}
