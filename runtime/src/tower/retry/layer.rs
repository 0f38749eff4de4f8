//! [`RetryLayer`]: wraps a service whose errors are fusebox's [`Error<E>`](crate::Error).

use std::time::Duration;

use tower_layer::Layer;

use super::RetryService;
use crate::retry::Retry;

/// Retries requests through the service it wraps, which must answer with
/// [`crate::Error<E>`]: put it *outside* a [`BreakerLayer`](crate::tower::BreakerLayer), so each
/// attempt passes the breaker (and its bulkhead) and is judged as a call of its own, and a
/// refusal is never retried. Nor is an error the breaker did not count (its classifier called
/// it a success, a 404, or ignored it): it is the caller's answer, as with `#[retry]`.
///
/// Requests must be `Clone` (each attempt sends a copy); the inner service too (each attempt
/// waits for its own readiness).
///
/// ```
/// use fusebox::retry::Retry;
/// use fusebox::tower::{BreakerLayer, RetryLayer};
/// use fusebox::Breaker;
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
pub struct RetryLayer<H = ()> {
    retry: Retry,
    hints: H,
}

impl RetryLayer {
    /// A layer retrying by `retry`'s policy, drawing on its name's budget: every counted
    /// failure is retried, with no server hint.
    pub fn new(retry: Retry) -> RetryLayer {
        RetryLayer { retry, hints: () }
    }

    /// The same layer, retrying only the counted failures `retry_on` accepts and honouring
    /// what `retry_after` reads from one (HTTP `Retry-After`, gRPC pushback): the next attempt
    /// waits at least that, and the breaker the attempt went through (for a keyed
    /// [`BreakerLayer`](crate::tower::BreakerLayer), the request's key) is held open until
    /// then ([`Breaker::hold_open`](crate::Breaker::hold_open)), as `#[retry]` does.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::retry::Retry;
    /// use fusebox::tower::{BreakerLayer, RetryLayer};
    /// use fusebox::{registry, Breaker, State};
    /// use tower::{service_fn, ServiceBuilder, ServiceExt};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// fn busy(e: &u16) -> bool { *e == 429 }
    /// fn after(e: &u16) -> Option<Duration> { (*e == 429).then(|| Duration::from_secs(3)) }
    /// let svc = ServiceBuilder::new()
    ///     .layer(RetryLayer::new(Retry::builder("tower-hints-doc").attempts(1).build().unwrap()).hints(busy, after))
    ///     .layer(BreakerLayer::new(Breaker::builder("tower-hints-doc")).unwrap())
    ///     .service(service_fn(|_: u32| async { Err::<u32, u16>(429) }));
    /// assert!(svc.oneshot(1).await.is_err());
    /// assert_eq!(registry().breaker("tower-hints-doc").unwrap().state(), State::ForcedOpen);
    /// # }
    /// ```
    pub fn hints<E>(
        self,
        retry_on: fn(&E) -> bool,
        retry_after: fn(&E) -> Option<Duration>,
    ) -> RetryLayer<Hints<E>> {
        RetryLayer {
            retry: self.retry,
            hints: Hints {
                retry_on,
                retry_after,
            },
        }
    }
}

/// What a [`RetryLayer`] reads from an error `E`: whether to retry it, and the dependency's
/// hint. `()` retries every counted failure without a hint; [`Hints`] are
/// [`RetryLayer::hints`]'.
pub trait RetryHints<E>: Clone + Send + Sync + 'static {
    /// Whether a counted failure may be retried.
    fn retry_on(&self, e: &E) -> bool;
    /// How long the dependency asked callers to wait, if it said.
    fn retry_after(&self, e: &E) -> Option<Duration>;
}

impl<E> RetryHints<E> for () {
    fn retry_on(&self, _: &E) -> bool {
        true
    }
    fn retry_after(&self, _: &E) -> Option<Duration> {
        None
    }
}

/// The `retry_on` and `retry_after` of [`RetryLayer::hints`].
pub struct Hints<E> {
    retry_on: fn(&E) -> bool,
    retry_after: fn(&E) -> Option<Duration>,
}

impl<E> Clone for Hints<E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for Hints<E> {}

impl<E> std::fmt::Debug for Hints<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hints")
    }
}

impl<E: 'static> RetryHints<E> for Hints<E> {
    fn retry_on(&self, e: &E) -> bool {
        (self.retry_on)(e)
    }
    fn retry_after(&self, e: &E) -> Option<Duration> {
        (self.retry_after)(e)
    }
}

impl<S, H: Clone> Layer<S> for RetryLayer<H> {
    type Service = RetryService<S, H>;

    fn layer(&self, inner: S) -> RetryService<S, H> {
        RetryService {
            inner,
            retry: self.retry.clone(),
            hints: self.hints.clone(),
        }
    }
}
