//! Getting the figures out: Prometheus text, JSON (feature `serde`) and the `metrics` crate
//! facade (feature `metrics`).
//!
//! Every output carries the same figures under the same names, `stuck` included, so an alert
//! written against one of them means the same thing in the others.
//!
//! ```
//! use fusebox_runtime::{export, Breaker};
//! Breaker::builder("export-doc").build().unwrap();
//! let text = export::prometheus();
//! assert!(text.contains(r#"fusebox_breaker_state{breaker="export-doc",state="closed"} 1"#));
//! ```

#[cfg(feature = "serde")]
pub(crate) mod json;
#[cfg(feature = "metrics")]
#[path = "metrics_facade.rs"]
pub mod metrics;
mod prometheus;
pub(crate) mod samples;

/// The global snapshot in the Prometheus text exposition format, as a `/metrics` endpoint serves it.
///
/// ```
/// fusebox_runtime::Breaker::builder("export-prometheus-doc").build().unwrap();
/// let text = fusebox_runtime::export::prometheus();
/// assert!(text.contains(r#"fusebox_breaker_stuck{breaker="export-prometheus-doc"} 0"#));
/// ```
pub fn prometheus() -> String {
    crate::metrics::snapshot::metrics().to_prometheus()
}

/// The `Content-Type` of [`prometheus`]'s output (text exposition format 0.0.4).
///
/// ```
/// assert!(fusebox_runtime::export::PROMETHEUS_CONTENT_TYPE.starts_with("text/plain"));
/// ```
pub const PROMETHEUS_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
