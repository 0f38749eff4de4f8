//! [`BulkheadService`]: a bulkhead permit around each call of an inner service.

use std::task::{Context, Poll};

use tower_service::Service;

use super::BulkheadFuture;
use crate::bulkhead::Bulkhead;
use crate::error::Error;

/// The service a [`BulkheadLayer`](super::BulkheadLayer) makes. `poll_ready` asks the inner
/// service only; the slot is taken in `call` (see the layer). The inner service's errors come
/// back as `Error::Failed`, a full pool as `Error::Rejected`.
///
/// ```
/// use fusebox::tower::{BulkheadLayer, BulkheadService};
/// use fusebox::Bulkhead;
/// use tower::Layer;
///
/// let layer = BulkheadLayer::new(Bulkhead::builder("bulkhead-service-doc").pool(2)).unwrap();
/// let svc: BulkheadService<u8> = layer.layer(7u8);
/// assert_eq!(*svc.get_ref(), 7);
/// ```
#[derive(Debug, Clone)]
pub struct BulkheadService<S> {
    pub(super) inner: S,
    pub(super) bulkhead: Bulkhead,
    /// Made by the registry from the layer's settings: inside a test scope, the scope's
    /// bulkhead of that name is used instead (as `BreakerLayer::new`'s breaker is). Read only
    /// with feature `testing`, which scopes need.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub(super) by_name: bool,
}

impl<S> BulkheadService<S> {
    /// The bulkhead of this call: the layer's, or inside a test scope the scope's of its name.
    fn current(&self) -> Bulkhead {
        #[cfg(feature = "testing")]
        if self.by_name && crate::registry::registry().is_scoped() {
            return crate::registry::registry().register_bulkhead(self.bulkhead.config().clone());
        }
        self.bulkhead.clone()
    }

    /// The inner service.
    ///
    /// ```
    /// # use fusebox::Bulkhead;
    /// # use fusebox::tower::BulkheadLayer;
    /// # use tower::Layer;
    /// let layer = BulkheadLayer::new(Bulkhead::builder("bulkhead-ref-doc").pool(2)).unwrap();
    /// assert_eq!(*layer.layer(7u8).get_ref(), 7);
    /// ```
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, unwrapped.
    ///
    /// ```
    /// # use fusebox::Bulkhead;
    /// # use fusebox::tower::BulkheadLayer;
    /// # use tower::Layer;
    /// let layer = BulkheadLayer::new(Bulkhead::builder("bulkhead-inner-doc").pool(2)).unwrap();
    /// assert_eq!(layer.layer(7u8).into_inner(), 7);
    /// ```
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S, Req> Service<Req> for BulkheadService<S>
where
    S: Service<Req> + Clone,
{
    type Response = S::Response;
    type Error = Error<S::Error>;
    type Future = BulkheadFuture<S, Req, S::Future>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Error::Failed)
    }

    fn call(&mut self, req: Req) -> Self::Future {
        // `call` commits to the call, so the slot is taken here, never in `poll_ready`.
        match self.current().try_acquire_owned() {
            Ok(permit) => BulkheadFuture::call(self.inner.call(req), permit),
            Err(bulkhead) if bulkhead.may_wait() => {
                // The ready service waits with the call for up to `max_wait`; a clone stays.
                let clone = self.inner.clone();
                let ready = std::mem::replace(&mut self.inner, clone);
                BulkheadFuture::waiting(Box::pin(bulkhead.acquire_owned()), ready, req)
            }
            Err(bulkhead) => BulkheadFuture::rejected(bulkhead.full()),
        }
    }
}
