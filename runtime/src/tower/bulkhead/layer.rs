//! [`BulkheadLayer`]: the registry's bulkhead around a tower service.

use tower_layer::Layer;

use super::BulkheadService;
use crate::bulkhead::Bulkhead;
use crate::bulkhead::BulkheadBuilder;
use crate::error::ConfigError;

/// A [`Layer`] that caps the calls in flight through a service at the bulkhead's pool: the
/// registry's bulkhead of that name, shared with `#[bulkhead(name = ...)]` and listed in
/// metrics. A call past the pool waits at most `max_wait`, then fails with
/// `Error::Rejected(Rejection::Full { .. })`.
///
/// Unlike tower's `ConcurrencyLimit`, `poll_ready` never waits for or reserves a slot: the slot
/// is taken in `call`, before the inner service is called, and freed when the response future
/// ends or is dropped. So a bulkhead rejects rather than queues (the point of a bulkhead), and a
/// service polled ready but never called holds nothing. A full pool with a `max_wait` waits
/// inside the response future, and only then calls the inner service.
///
/// ```
/// use fusebox::tower::BulkheadLayer;
/// use fusebox::{registry, Bulkhead, Error, Rejection};
/// use tower::{service_fn, Layer, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let layer = BulkheadLayer::new(Bulkhead::builder("bulkhead-layer-doc").pool(1)).unwrap();
/// let held = layer.bulkhead().acquire().await.unwrap();
/// let svc = layer.layer(service_fn(|x: u32| async move { Ok::<_, ()>(x) }));
/// let full = svc.clone().oneshot(1).await.unwrap_err();
/// assert!(matches!(full, Error::Rejected(Rejection::Full { pool: 1, .. })));
/// drop(held);
/// assert_eq!(svc.oneshot(2).await.unwrap(), 2);
/// assert_eq!(registry().bulkhead("bulkhead-layer-doc").unwrap().pool(), 1);
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct BulkheadLayer {
    bulkhead: Bulkhead,
    /// Made by the registry from the builder (`new`): follows a test scope entered later.
    by_name: bool,
}

impl BulkheadLayer {
    /// Validates `builder` and takes the registry's bulkhead of its name (creating it if new).
    ///
    /// ```
    /// use fusebox::tower::BulkheadLayer;
    /// use fusebox::Bulkhead;
    /// assert!(BulkheadLayer::new(Bulkhead::builder("bulkhead-new-doc").pool(8)).is_ok());
    /// assert!(BulkheadLayer::new(Bulkhead::builder("bulkhead-new-doc").pool(0)).is_err());
    /// ```
    pub fn new(builder: BulkheadBuilder) -> Result<Self, ConfigError> {
        Ok(BulkheadLayer {
            bulkhead: builder.build()?,
            by_name: true,
        })
    }

    /// A layer over an existing bulkhead, e.g. `registry().bulkhead("reports")`.
    ///
    /// ```
    /// use fusebox::tower::BulkheadLayer;
    /// use fusebox::Bulkhead;
    /// let pool = Bulkhead::builder("bulkhead-from-doc").pool(8).build().unwrap();
    /// assert!(BulkheadLayer::from_bulkhead(pool.clone()).bulkhead().ptr_eq(&pool));
    /// ```
    pub fn from_bulkhead(bulkhead: Bulkhead) -> Self {
        BulkheadLayer {
            bulkhead,
            by_name: false,
        }
    }

    /// The bulkhead every call goes through.
    ///
    /// ```
    /// # use fusebox::Bulkhead;
    /// # use fusebox::tower::BulkheadLayer;
    /// let layer = BulkheadLayer::new(Bulkhead::builder("bulkhead-get-doc").pool(3)).unwrap();
    /// assert_eq!(layer.bulkhead().pool(), 3);
    /// ```
    pub fn bulkhead(&self) -> &Bulkhead {
        &self.bulkhead
    }
}

impl<S> Layer<S> for BulkheadLayer {
    type Service = BulkheadService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        BulkheadService {
            inner,
            bulkhead: self.bulkhead.clone(),
            by_name: self.by_name,
        }
    }
}
