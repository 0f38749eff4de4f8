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
//! # Where things are
//!
//! The root holds the three attributes (`#[breaker]`, `#[bulkhead]`, `#[retry]`) and what a service meets on its first day: [`Breaker`],
//! [`Bulkhead`], [`Error`], [`Rejection`], [`State`], [`registry()`] and [`metrics()`]. The rest
//! lives in modules named for what they hold:
//!
//! | module | what it holds |
//! |---|---|
//! | [`config`] | builders and validated configurations of breakers and bulkheads |
//! | [`settings`] | the settings table: values, keys, durations, their errors |
//! | [`call`] | what a call made without the attributes returns or holds |
//! | [`events`] | state transitions and their reasons |
//! | [`stale`] | the last good value served while a breaker rejects |
//! | [`mod@registry`] | the registry of every breaker and bulkhead |
//! | [`mod@metrics`] | snapshot types and exporters (Prometheus, JSON, the `metrics` facade) |
//! | [`tune`] | capacity arithmetic for a configuration |
//! | `response` | HTTP answers for rejections (feature `axum`) |
//! | [`guide`] | the guides: recovery, keyed breakers, stale values, settings, operations, fleet, testing, tower, the replay |
//! | `testing`, `tower`, `admin`, `fleet` | behind the features of the same name (`fleet`: `redis`) |
//!
//! The runtime comes from `fusebox-runtime` and the attributes from `fusebox-macros`, both pinned
//! to this crate's exact version: depend on `fusebox` alone.
#![warn(missing_docs)]
// docs.rs (`--cfg docsrs`, nightly) marks every feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use fusebox_runtime::{metrics, registry, Breaker, Bulkhead, Error, Rejection, State};

/// Builders and validated configurations of breakers and bulkheads, for code that makes them
/// without the attributes: [`Breaker::builder`] and [`Bulkhead::builder`] start here.
///
/// ```
/// use std::time::Duration;
/// use fusebox::config::BreakerBuilder;
/// use fusebox::Breaker;
///
/// let builder: BreakerBuilder = Breaker::builder("config-doc").timeout(Duration::from_millis(800));
/// let registered = builder.build().unwrap(); // the registry's breaker of this name
/// let alone = builder.build_detached().unwrap(); // one that is not in the registry
/// assert!(!registered.ptr_eq(&alone));
/// ```
pub mod config {
    pub use fusebox_runtime::{
        BreakerBuilder, BreakerConfig, BulkheadBuilder, BulkheadConfig, ShadowSettings,
    };
}

/// The settings table: the validated values, every key text sources use, durations as text,
/// and the error a bad value gets (from builders, text sources and overrides alike).
///
/// ```
/// use std::time::Duration;
/// use fusebox::settings::{parse_duration, ConfigError, KEYS};
///
/// assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
/// assert!(matches!(parse_duration("3 s"), Err(ConfigError::BadDuration { .. })));
/// assert!(KEYS.contains(&"trip_p95"));
/// ```
pub mod settings {
    pub use fusebox_runtime::{
        parse_duration, ConfigError, HalfOpenPolicy, PoolLimit, Settings, SlowRule, WindowKind,
        SETTING_KEYS as KEYS,
    };
    // Settings outside the code (issue 29): overrides at start, live changes, sources.
    pub use fusebox_runtime::{
        Applied, AppliedTo, GuardKind, OverrideError, Overrides, SettingInForce, Source, Undeclared,
    };
}

/// What a call made without the attributes returns or holds: the [`Completion`] of
/// [`Breaker::call_filtered`] and [`Breaker::call_classified`], the [`Outcome`] a classifier
/// gives (success, failure or ignored), and a bulkhead's permit.
///
/// ```
/// use fusebox::{call::Completion, Breaker};
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let b = Breaker::builder("call-doc").build_detached().unwrap();
/// // A 404 is the dependency answering, not failing: a success for the window, and the
/// // error goes back to the caller as is (no fallback).
/// let c = b.call_filtered(async { Err::<(), u16>(404) }, |status| *status >= 500).await;
/// assert!(matches!(c, Completion::Ignored(404)));
/// assert_eq!((b.metrics().window_calls, b.metrics().failed), (1, 0));
/// # }
/// ```
pub mod call {
    pub use fusebox_runtime::{BulkheadPermit, Completion, Outcome};
}

/// State transitions as [`Registry::subscribe`](crate::registry::Registry::subscribe) and the
/// testing recorder deliver them, with the
/// reason of each.
///
/// ```
/// use fusebox::events::{Reason, Transition};
/// fn opened_by_latency(t: &Transition) -> bool {
///     t.to == fusebox::State::Open && matches!(t.reason, Reason::SlowRate { .. })
/// }
/// # let _ = opened_by_latency;
/// ```
pub mod events {
    pub use fusebox_runtime::{Reason, Transition};
}

/// The last good value, served while a breaker rejects (`stale_for`): what a `stale_fallback`
/// receives, and the cache behind it for code without the attributes.
///
/// ```
/// use std::time::Duration;
/// use fusebox::stale::Stale;
/// fn label(s: &Stale<String>) -> String {
///     format!("{} (as of {} s ago)", s.value, s.age.as_secs())
/// }
/// # let _ = label;
/// # let _ = Duration::ZERO;
/// ```
pub mod stale {
    pub use fusebox_runtime::{Stale, StaleCache};
}

/// The registry of every breaker and bulkhead: [`registry()`](crate::registry()) returns it.
///
/// ```
/// use fusebox::registry::Registry;
/// let r: &Registry = fusebox::registry();
/// fusebox::Breaker::builder("registry-mod-doc").build().unwrap();
/// assert!(r.breaker("registry-mod-doc").is_some());
/// ```
pub mod registry {
    pub use fusebox_runtime::{KeyedNames, Registry};
}

/// Snapshot types of [`metrics()`](crate::metrics()) and their exporters: Prometheus text,
/// JSON (feature `serde`, through `Serialize`) and the `metrics` crate facade (feature `metrics`).
///
/// ```
/// use fusebox::metrics::{prometheus, Metrics};
/// fusebox::Breaker::builder("metrics-mod-doc").build().unwrap();
/// let m: Metrics = fusebox::metrics();
/// assert!(m.breakers.iter().any(|b| b.name == "metrics-mod-doc"));
/// assert!(prometheus().contains("fusebox_breaker_state{breaker=\"metrics-mod-doc\""));
/// ```
pub mod metrics {
    /// The `metrics` crate facade: breaker and bulkhead figures for any installed exporter.
    #[cfg(feature = "metrics")]
    pub use fusebox_runtime::export::metrics as facade;
    pub use fusebox_runtime::export::{prometheus, PROMETHEUS_CONTENT_TYPE};
    pub use fusebox_runtime::{
        stuck_breakers, AdaptiveMetrics, BreakerMetrics, BulkheadMetrics, LimitChange, Metrics,
        RejectedByReason, RetryMetrics, ShadowMetrics, ShadowReport,
    };
}

pub use fusebox_runtime::tune;

pub use fusebox_runtime::retry;

pub use fusebox_macros::retry;

/// HTTP answers (feature `axum`): [`Rejection`] and [`Error`] implement axum's `IntoResponse`
/// as `503` (`504` for a timeout) with `Retry-After` in whole seconds and a body that names
/// nothing; [`Named`] is the opt-in for a body that names the breaker.
///
/// ```
/// use std::time::Duration;
/// use axum::response::IntoResponse;
/// use fusebox::{response::Named, Rejection, State};
///
/// let open = Rejection::Open { name: "payments/eu".into(), state: State::Open, retry_in: Some(Duration::from_millis(1500)) };
/// let public = open.clone().into_response();
/// assert_eq!((public.status().as_u16(), &public.headers()["retry-after"]), (503, &"2".parse().unwrap()));
/// let internal = Named(open).into_response(); // the same answer, and the body names `payments/eu`
/// assert_eq!(internal.status(), 503);
/// ```
#[cfg(feature = "axum")]
pub mod response {
    pub use fusebox_runtime::Named;
}

/// Admin HTTP router (feature `admin`): list, force open, force close, reset, an operator's page.
#[cfg(feature = "admin")]
pub use fusebox_runtime::admin;
/// Per-test registry scopes, a transition recorder and assertions (feature `testing`).
#[cfg(feature = "testing")]
pub use fusebox_runtime::testing;

// Keeps the paths of releases before 0.1 compiling (`fusebox::BreakerBuilder`,
// `fusebox::Metrics`, `fusebox::export`, ...): every name the runtime exports, re-exported at the
// root but hidden. Not documented API: the modules above are. Explicit items shadow it. The module
// is public and hidden too: rustdoc inlines a glob from a private module, hidden or not.
#[doc(hidden)]
pub use crate::compat::*;
#[doc(hidden)]
pub mod compat {
    pub use fusebox_runtime::*;
}

pub use fusebox_macros::breaker;

pub use fusebox_macros::bulkhead;

pub mod guide;

// The attribute reference lives with the macros (macros/docs/*.md, shown on `breaker` and
// `bulkhead`); its examples need this crate, so they are compiled and run as its doc tests.
#[cfg(doctest)]
#[doc = include_str!("../macros/docs/breaker.md")]
struct BreakerReference;
#[cfg(doctest)]
#[doc = include_str!("../macros/docs/bulkhead.md")]
struct BulkheadReference;
#[cfg(doctest)]
#[doc = include_str!("../macros/docs/retry.md")]
struct RetryReference;

// The README's quick start is a complete program: `cargo test` compiles and runs it.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct Readme;

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
