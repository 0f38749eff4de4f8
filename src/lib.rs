//! fusebox: circuit breakers and bulkheads for async functions, as attributes.
//!
//! ```
//! use fusebox::{breaker, bulkhead, Error, Rejection, State};
//!
//! #[derive(Debug)]
//! enum PayError { Declined, Unavailable(Rejection) }
//! impl From<Rejection> for PayError {
//!     fn from(r: Rejection) -> Self { PayError::Unavailable(r) }
//! }
//!
//! #[derive(Debug, PartialEq)]
//! enum Verification { Verified, WillConfirmByEmail }
//!
//! // Trip when p95 > 500 ms or half the calls fail; half-open admits 5 % of traffic.
//! #[breaker(name = "crate-doc-payments", trip_p95 = "500ms", half_open_pct = 5, fallback = confirm_by_email)]
//! #[bulkhead(pool = 60)]
//! async fn verify_payment(amount: u32) -> Result<Verification, PayError> {
//!     if amount > 0 { Ok(Verification::Verified) } else { Err(PayError::Declined) }
//! }
//!
//! // The typed fallback: called for every rejection and every counted failure.
//! fn confirm_by_email(_err: Error<PayError>) -> Result<Verification, PayError> {
//!     Ok(Verification::WillConfirmByEmail)
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! assert_eq!(verify_payment(10).await.unwrap(), Verification::Verified);
//! assert_eq!(verify_payment(0).await.unwrap(), Verification::WillConfirmByEmail);
//! let breaker = fusebox::registry().breaker("crate-doc-payments").unwrap();
//! assert_eq!(breaker.state(), State::Closed);
//! assert_eq!(breaker.metrics().failed, 1);
//! # }
//! ```
//!
//! The runtime ([`Breaker`], [`Bulkhead`], [`registry`], [`metrics`]) is re-exported from
//! `fusebox-runtime`; the attributes come from `fusebox-macros`, pinned to the same version.
#![warn(missing_docs)]
// docs.rs (`--cfg docsrs`, nightly) marks every feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
pub use fusebox_runtime::*;

/// Puts a circuit breaker around an `async fn`; the body is wrapped in place and the
/// signature does not change. Every argument is checked at compile time; the README's
/// "Attributes" section lists them.
///
/// ```
/// use fusebox::{breaker, Error, Rejection};
///
/// #[derive(Debug)]
/// enum PayError { Declined, Unavailable(Rejection) }
/// impl From<Rejection> for PayError {
///     fn from(r: Rejection) -> Self { PayError::Unavailable(r) }
/// }
///
/// #[breaker(name = "doc-payments", trip_p95 = "500ms", timeout = "800ms")]
/// async fn verify(amount: u32) -> Result<&'static str, PayError> {
///     if amount > 1000 { Err(PayError::Declined) } else { Ok("verified") }
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// assert_eq!(verify(10).await.unwrap(), "verified");
/// assert!(fusebox::registry().breaker("doc-payments").is_some());
/// # }
/// ```
///
/// With `stale_for`, a rejected or failed call answers with the last good value for the same
/// arguments while it is younger than that (README, "Last good value"); `stale_fallback`, if
/// given, receives it as a [`Stale`] with its age:
///
/// ```
/// use std::time::Duration;
/// use fusebox::{breaker, registry, Error, Rejection, Stale};
///
/// #[derive(Debug)]
/// struct Down(Rejection);
/// impl From<Rejection> for Down {
///     fn from(r: Rejection) -> Self { Down(r) }
/// }
///
/// #[breaker(name = "doc-rates", stale_for = "10m", stale_fallback = aged)]
/// async fn rate(currency: &str) -> Result<String, Down> {
///     Ok(format!("{currency} 1.08"))
/// }
///
/// fn aged(stale: Stale<String>, _why: Error<Down>) -> Result<String, Down> {
///     Ok(format!("{} ({}s old)", stale.value, stale.age.as_secs()))
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// assert_eq!(rate("EUR").await.unwrap(), "EUR 1.08");
/// registry().breaker("doc-rates").unwrap().force_open();
/// tokio::time::advance(Duration::from_secs(90)).await;
/// assert_eq!(rate("EUR").await.unwrap(), "EUR 1.08 (90s old)");
/// assert_eq!(registry().breaker("doc-rates").unwrap().metrics().stale_served, 1);
/// # }
/// ```
pub use fusebox_macros::breaker;

/// Caps the calls of an `async fn` in flight at `pool`; the next call waits at most
/// `max_wait` (default: not at all) and is then rejected with `Rejection::Full`.
///
/// ```
/// use fusebox::{bulkhead, Rejection};
///
/// #[bulkhead(pool = 2, name = "doc-reports")]
/// async fn report(id: u32) -> Result<u32, Rejection> {
///     Ok(id)
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// assert_eq!(report(7).await.unwrap(), 7);
/// assert_eq!(fusebox::registry().bulkhead("doc-reports").unwrap().pool(), 2);
/// # }
/// ```
pub use fusebox_macros::bulkhead;

/// Support for the code the attributes generate. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use fusebox_runtime::__private::*;
}

/// Fleet mode on Redis: fleet-wide overrides, quorum opening, warm restarts (feature `redis`).
#[cfg(feature = "redis")]
pub use fusebox_runtime::fleet;
/// Tower middleware (feature `tower`): `BreakerLayer`, `BulkheadLayer` and `FallbackLayer` on
/// the same registry and settings as the attributes.
#[cfg(feature = "tower")]
pub use fusebox_runtime::tower;
