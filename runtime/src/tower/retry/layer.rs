//! [`RetryLayer`]: wraps a service whose errors are fusebox's [`Error<E>`](crate::Error).

use tower_layer::Layer;

use super::RetryService;
use crate::retry::Retry;

/// Retries requests through the service it wraps, which must answer with
/// [`crate::Error<E>`]: put it *outside* a [`BreakerLayer`](crate::tower::BreakerLayer), so each
/// attempt passes the breaker (and its bulkhead) and is judged as a call of its own, and a
/// refusal is never retried.
///
/// Requests must be `Clone` (each attempt sends a copy); the inner service too (each attempt
/// waits for its own readiness).
///
/// ```
/// use fusebox_runtime::retry::Retry;
/// use fusebox_runtime::tower::{BreakerLayer, RetryLayer};
/// use fusebox_runtime::Breaker;
/// use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
/// use std::sync::Arc;
/// use tower::{service_fn, ServiceBuilder, ServiceExt};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// let tries = Arc::new(AtomicU32::new(0));
/// let seen = tries.clone();
/// let svc = ServiceBuilder::new()
///     .layer(RetryLayer::new(Retry::builder("tower-retry-doc").attempts(3).build().unwrap()))
///     .layer(BreakerLayer::new(Breaker::builder("tower-retry-doc")).unwrap())
///     .service(service_fn(move |x: u32| {
///         let n = seen.fetch_add(1, SeqCst);
///         async move { if n < 2 { Err("reset by peer") } else { Ok(x * 2) } }
///     }));
/// assert_eq!(svc.oneshot(21).await.unwrap(), 42);
/// assert_eq!(tries.load(SeqCst), 3);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct RetryLayer {
    retry: Retry,
}

impl RetryLayer {
    /// A layer retrying by `retry`'s policy, drawing on its name's budget.
    pub fn new(retry: Retry) -> RetryLayer {
        RetryLayer { retry }
    }
}

impl<S> Layer<S> for RetryLayer {
    type Service = RetryService<S>;

    fn layer(&self, inner: S) -> RetryService<S> {
        RetryService {
            inner,
            retry: self.retry.clone(),
        }
    }
}
