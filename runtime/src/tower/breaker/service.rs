//! [`BreakerService`]: admission, bulkhead, timeout and classification around an inner service.

use std::fmt;
use std::task::{Context, Poll};

use tower_service::Service;

use super::BreakerFuture;
use crate::bulkhead::Bulkhead;
use crate::error::Error;
use crate::tower::classify::{Classify, ErrorsFail};
use crate::tower::key::{Select, Single};

/// The service a [`BreakerLayer`](super::BreakerLayer) makes.
///
/// `poll_ready` asks the inner service only; the breaker admits (or refuses) the call inside
/// the returned future, before the inner service is called, so nothing is held for a
/// `poll_ready` that no `call` follows. The service polled ready goes with the call (and a
/// clone stays here), which is why `S: Clone`. Except while the breaker is open (one breaker
/// for every request): `poll_ready` is then ready at once, without asking the inner service,
/// so callers are refused at once rather than queued behind a client that is not ready (one
/// reconnecting to a dead host); a call admitted after all (the open period ended meanwhile)
/// waits for the inner service's readiness inside its future.
///
/// ```
/// use fusebox::tower::{BreakerLayer, BreakerService};
/// use fusebox::Breaker;
/// use tower::{service_fn, Layer};
///
/// let layer = BreakerLayer::new(Breaker::builder("service-doc")).unwrap();
/// let svc: BreakerService<_> = layer.layer(service_fn(|x: u32| async move { Ok::<_, ()>(x) }));
/// # let _ = svc.get_ref();
/// ```
#[derive(Clone)]
pub struct BreakerService<S, P = Single, C = ErrorsFail> {
    pub(super) inner: S,
    pub(super) select: P,
    pub(super) bulkhead: Option<Bulkhead>,
    pub(super) classify: C,
    /// The last `poll_ready` answered for an open breaker without polling `inner`: the
    /// call's future polls it ready before calling it.
    pub(super) unpolled: bool,
}

impl<S, P, C> BreakerService<S, P, C> {
    /// The inner service.
    ///
    /// ```
    /// # use fusebox::Breaker;
    /// # use fusebox::tower::BreakerLayer;
    /// # use tower::Layer;
    /// let svc = BreakerLayer::new(Breaker::builder("get-ref-doc")).unwrap().layer(7u8);
    /// assert_eq!(*svc.get_ref(), 7);
    /// ```
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, unwrapped.
    ///
    /// ```
    /// # use fusebox::Breaker;
    /// # use fusebox::tower::BreakerLayer;
    /// # use tower::Layer;
    /// let svc = BreakerLayer::new(Breaker::builder("into-inner-doc")).unwrap().layer(7u8);
    /// assert_eq!(svc.into_inner(), 7);
    /// ```
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S, Req, P, C> Service<Req> for BreakerService<S, P, C>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Future: Send,
    S::Response: Send + 'static,
    S::Error: Send + 'static,
    Req: Send + 'static,
    P: Select<Req>,
    C: Classify<S::Response, S::Error> + Clone + Send + 'static,
{
    type Response = S::Response;
    type Error = Error<S::Error>;
    type Future = BreakerFuture<S::Response, S::Error>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // An open breaker refuses at once: the caller is not queued for the inner service.
        self.unpolled = self.select.refusing();
        if self.unpolled {
            return Poll::Ready(Ok(()));
        }
        // Not a call of the dependency: an inner readiness error is not counted.
        self.inner.poll_ready(cx).map_err(Error::Failed)
    }

    fn call(&mut self, req: Req) -> Self::Future {
        let breaker = self.select.select(&req);
        let clone = self.inner.clone();
        let ready = std::mem::replace(&mut self.inner, clone);
        BreakerFuture::new(
            breaker,
            self.bulkhead.clone(),
            ready,
            req,
            self.classify.clone(),
            std::mem::take(&mut self.unpolled),
        )
    }
}

impl<S: fmt::Debug, P: fmt::Debug, C> fmt::Debug for BreakerService<S, P, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BreakerService")
            .field("inner", &self.inner)
            .field("select", &self.select)
            .field("bulkhead", &self.bulkhead)
            .finish_non_exhaustive()
    }
}
