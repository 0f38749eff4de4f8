//! [`BreakerLayer`]: the registry's breaker (or one per key) around a tower service.

use std::fmt;
use std::sync::Arc;

use tower_layer::Layer;

use super::BreakerService;
use crate::breaker::Breaker;
use crate::bulkhead::Bulkhead;
use crate::error::ConfigError;
use crate::settings::BreakerBuilder;
use crate::tower::classify::ErrorsFail;
use crate::tower::key::{Keyed, Single};

/// A [`Layer`] that puts a circuit breaker around a service: the registry's breaker of the
/// builder's name, so the same name in `#[breaker(name = ...)]` is the same breaker.
///
/// ```
/// use std::time::Duration;
/// use fusebox::tower::BreakerLayer;
/// use fusebox::{registry, Breaker};
///
/// let layer = BreakerLayer::new(
///     Breaker::builder("layer-doc-payments")
///         .trip_p95(Duration::from_millis(500))
///         .timeout(Duration::from_millis(800)),
/// )
/// .expect("valid settings");
/// assert!(layer.breaker().ptr_eq(&registry().breaker("layer-doc-payments").unwrap()));
/// assert!(BreakerLayer::new(Breaker::builder("bad").failure_rate(0)).is_err());
/// ```
///
/// `P` picks the breaker per request ([`Single`] or [`Keyed`]), `C` classifies results
/// ([`ErrorsFail`] unless [`failure`](Self::failure) says otherwise).
#[derive(Clone)]
#[must_use]
pub struct BreakerLayer<P = Single, C = ErrorsFail> {
    pub(super) select: P,
    pub(super) bulkhead: Option<Bulkhead>,
    pub(super) classify: C,
}

impl BreakerLayer {
    /// Validates `builder` and takes the registry's breaker of its name (creating it if new).
    ///
    /// ```
    /// use fusebox::tower::BreakerLayer;
    /// use fusebox::Breaker;
    /// let layer = BreakerLayer::new(Breaker::builder("new-doc").window_calls(20)).unwrap();
    /// assert_eq!(layer.breaker().name(), "new-doc");
    /// ```
    pub fn new(builder: BreakerBuilder) -> Result<Self, ConfigError> {
        Ok(Self::single(builder.build()?, true))
    }

    /// A layer over an existing breaker, e.g. `registry().breaker("payments")` or one from
    /// [`BreakerBuilder::build`].
    ///
    /// ```
    /// use fusebox::tower::BreakerLayer;
    /// use fusebox::Breaker;
    /// let b = Breaker::builder("from-breaker-doc").build().unwrap();
    /// assert!(BreakerLayer::from_breaker(b.clone()).breaker().ptr_eq(&b));
    /// ```
    pub fn from_breaker(breaker: Breaker) -> Self {
        Self::single(breaker, false)
    }

    fn single(breaker: Breaker, by_name: bool) -> Self {
        BreakerLayer {
            select: Single { breaker, by_name },
            bulkhead: None,
            classify: ErrorsFail,
        }
    }
}

impl<P, C> BreakerLayer<P, C> {
    /// The breaker every request goes through.
    ///
    /// ```
    /// # use fusebox::{Breaker, State};
    /// # use fusebox::tower::BreakerLayer;
    /// let layer = BreakerLayer::new(Breaker::builder("breaker-doc")).unwrap();
    /// assert_eq!(layer.breaker().state(), State::Closed);
    /// ```
    pub fn breaker(&self) -> &Breaker
    where
        P: AsRef<Breaker>,
    {
        self.select.as_ref()
    }
}

impl<F> BreakerLayer<Keyed<F>> {
    /// One breaker per key of the request: `key(&request)` names it `name/key` in the
    /// registry (created on first use, with these settings); `None` uses the breaker `name`.
    /// The key may borrow from the request when `key` is a `fn` (see
    /// [`KeyFn`](crate::tower::KeyFn)): `fn host<B>(req: &Request<B>) -> Option<&str>`.
    ///
    /// ```
    /// use fusebox::tower::BreakerLayer;
    /// use fusebox::{registry, Breaker};
    /// use tower::{service_fn, Layer, ServiceExt};
    ///
    /// // The request here is `(host, path)`; with `http::Request<B>` it would be
    /// // `|req: &Request<B>| req.uri().host().map(str::to_owned)`.
    /// let per_host = BreakerLayer::keyed(
    ///     Breaker::builder("keyed-layer-doc").window_calls(10),
    ///     |req: &(&str, &str)| Some(req.0.to_owned()),
    /// )
    /// .unwrap();
    /// let svc = per_host.layer(service_fn(|_req: (&str, &str)| async { Ok::<_, ()>(200) }));
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// svc.oneshot(("eu.example.com", "/rates")).await.unwrap();
    /// assert!(registry().breaker("keyed-layer-doc/eu.example.com").is_some());
    /// # });
    /// ```
    pub fn keyed(builder: BreakerBuilder, key: F) -> Result<Self, ConfigError> {
        let template = builder.config()?;
        // Declared now, as an annotated keyed site is: start-up overrides of its keys are
        // checked against it, not first met when a key is called.
        crate::registry::registry().declare_keyed(&template);
        Ok(BreakerLayer {
            select: Keyed {
                template: Arc::new(template),
                key,
            },
            bulkhead: None,
            classify: ErrorsFail,
        })
    }
}

impl<P, C> BreakerLayer<P, C> {
    /// Which results count as failures: `classify(&result)` for every finished call (a
    /// closure over `&Result<Response, Error>`, or any [`Classify`](crate::tower::Classify)).
    /// A response classified as a failure still goes back to the caller as it is.
    ///
    /// ```
    /// use fusebox::tower::BreakerLayer;
    /// use fusebox::Breaker;
    ///
    /// // With http: `|res: &Result<Response<B>, E>| res.as_ref().map_or(true, |r| r.status().is_server_error())`.
    /// let layer = BreakerLayer::new(Breaker::builder("failure-doc"))
    ///     .unwrap()
    ///     .failure(|res: &Result<u16, std::io::Error>| res.as_ref().map_or(true, |s| *s >= 500));
    /// # let _ = layer;
    /// ```
    pub fn failure<C2>(self, classify: C2) -> BreakerLayer<P, C2> {
        BreakerLayer {
            select: self.select,
            bulkhead: self.bulkhead,
            classify,
        }
    }

    /// Puts `bulkhead` behind the breaker in the same service, in the attribute's order: an
    /// open breaker takes no permit, and a full bulkhead is a rejection, not a failure of the
    /// dependency. Prefer this to stacking a [`BulkheadLayer`](crate::tower::BulkheadLayer)
    /// under the breaker, whose `Rejected(Full)` the breaker would count as a failed call.
    ///
    /// ```
    /// use fusebox::tower::BreakerLayer;
    /// use fusebox::{Breaker, Bulkhead};
    /// let pool = Bulkhead::builder("bulkhead-doc").pool(60).build().unwrap();
    /// let layer = BreakerLayer::new(Breaker::builder("bulkhead-doc")).unwrap().bulkhead(pool);
    /// # let _ = layer;
    /// ```
    pub fn bulkhead(mut self, bulkhead: Bulkhead) -> Self {
        self.bulkhead = Some(bulkhead);
        self
    }

    /// How this layer picks a request's breaker.
    ///
    /// ```
    /// use fusebox::tower::{BreakerLayer, Select};
    /// use fusebox::Breaker;
    /// let layer = BreakerLayer::new(Breaker::builder("selector-doc")).unwrap();
    /// assert_eq!(Select::<()>::select(layer.selector(), &()).name(), "selector-doc");
    /// ```
    pub fn selector(&self) -> &P {
        &self.select
    }
}

impl<S, P: Clone, C: Clone> Layer<S> for BreakerLayer<P, C> {
    type Service = BreakerService<S, P, C>;

    fn layer(&self, inner: S) -> Self::Service {
        BreakerService {
            inner,
            select: self.select.clone(),
            bulkhead: self.bulkhead.clone(),
            classify: self.classify.clone(),
            unpolled: false,
        }
    }
}

impl<P: fmt::Debug, C> fmt::Debug for BreakerLayer<P, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BreakerLayer")
            .field("select", &self.select)
            .field("bulkhead", &self.bulkhead)
            .finish_non_exhaustive()
    }
}
