//! Tower middleware (feature `tower`): the registry's breakers and bulkheads as
//! [`tower_layer::Layer`]s, for hyper-util and tonic clients, axum routes, or any
//! [`tower_service::Service`].
//!
//! A layer's breaker *is* the registry's breaker of that name, built from the same
//! [`BreakerBuilder`](crate::BreakerBuilder) settings as `#[breaker(...)]`: the admin router,
//! [`metrics()`](crate::metrics), Prometheus and test scopes see it, and the same name used by an
//! attribute and a layer is one breaker. Every call takes the attribute's path: breaker
//! admission, then the bulkhead permit, then the timeout, then the call.
//!
//! | piece | what it does |
//! |---|---|
//! | [`BreakerLayer::new`] / [`BreakerLayer::from_breaker`] | one breaker for every request |
//! | [`BreakerLayer::keyed`] | one breaker per key of the request (`name/host`, `name/route`); the key may borrow from it ([`KeyFn`]) |
//! | [`BreakerLayer::failure`] | which results count as failures (a `5xx`, not a `4xx`) |
//! | [`BreakerLayer::bulkhead`] | a bulkhead behind the breaker, in one service |
//! | [`BulkheadLayer`] | a bulkhead alone |
//! | [`FallbackLayer`] | answers an error (a rejection included) with a response |
//! | [`RetryLayer`] | retries through the breaker, on its name's budget ([`crate::retry`]) |
//! | [`rejection`], [`box_error`] | the [`Rejection`](crate::Rejection) through tower's `BoxError` |
//!
//! Errors are [`crate::Error<E>`]: `Rejected(Rejection)` when fusebox refused or timed out the
//! call, `Failed(E)` for the inner service's own error. With feature `axum` both implement
//! `IntoResponse`: an open breaker answers `503 Service Unavailable` with `Retry-After`.
//!
//! ```
//! use std::time::Duration;
//! use fusebox::tower::BreakerLayer;
//! use fusebox::{Breaker, Error, Rejection};
//! use tower::{service_fn, Layer, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let layer = BreakerLayer::new(
//!     Breaker::builder("tower-doc-inventory").window_calls(2).timeout(Duration::from_secs(1)),
//! )
//! .expect("valid settings");
//! let inventory = layer.layer(service_fn(|sku: u32| async move {
//!     if sku == 0 { Err("no such sku") } else { Ok(sku * 10) }
//! }));
//! assert_eq!(inventory.clone().oneshot(4).await.unwrap(), 40);
//! let failed = inventory.clone().oneshot(0).await;
//! assert!(matches!(failed, Err(Error::Failed("no such sku"))));
//! // One failure in a window of two is the default 50 %: open, refused without a call.
//! let refused = inventory.oneshot(4).await.unwrap_err();
//! assert!(matches!(refused, Error::Rejected(Rejection::Open { .. })));
//! # }
//! ```
//!
//! **`poll_ready` and permits.** Neither layer holds anything between `poll_ready` and `call`:
//! `poll_ready` only asks the inner service, except while a layer's one breaker is open: it is
//! then ready at once, so callers are refused at once rather than queued behind a client that
//! is not ready (the call's future, admitted after all, waits for the client). The breaker admits inside the response future and
//! then takes its bulkhead's permit, right before the inner call; a [`BulkheadLayer`] alone
//! takes its slot in `call`. Both are released when the call ends or its future is dropped, so
//! a service polled ready and then dropped (or kept idle in a pool) holds no permit and no
//! half-open trial slot. Why not tower's way (`ConcurrencyLimit` reserves in `poll_ready`): a
//! reserved slot or trial would sit in every idle clone, and a breaker must refuse at once, not
//! queue callers in `poll_ready`. The price: the inner service must be `Clone`, because the
//! service that was polled ready travels with the breaker's call and is only called once
//! admitted (tower's own `Retry` and axum's `HandleError` do the same), so an open breaker never
//! even calls the inner service, be it a `Buffer` that would send the request on `call`.
//!
//! **Futures.** The breaker's response future is boxed (one allocation per call) and `Send`:
//! the call runs through the very `async` code path of the attributes (admission, permit,
//! timeout and slow-call watch) rather than a second, hand-polled copy of it. The bulkhead's and
//! the fallback's are polled in place and allocate nothing. `benches/` compares the costs with
//! tower-resilience and tower's `ConcurrencyLimit`.

mod breaker;
mod bulkhead;
mod classify;
mod error;
mod fallback;
mod key;
mod retry;

pub use breaker::{BreakerFuture, BreakerLayer, BreakerService};
pub use bulkhead::{BulkheadFuture, BulkheadLayer, BulkheadService};
pub use classify::{Classified, Classify, ErrorsFail};
pub use error::{box_error, rejection, BoxError};
pub use fallback::{Fallback, FallbackFuture, FallbackLayer};
pub use key::{KeyFn, Keyed, Select, Single};
pub use retry::{Hints, RetryHints, RetryLayer, RetryService};
