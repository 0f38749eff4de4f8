//! Getting the figures out: Prometheus text, JSON (feature `serde`: `Metrics::to_json`) and the
//! `metrics` crate facade (feature `metrics`).
//!
//! Every output carries the same figures under the same names, `stuck` included, so an alert
//! written against one of them means the same thing in the others. The Prometheus text is one
//! text whichever way it is asked for (`metrics().to_prometheus()` or [`prometheus()`]): both
//! hold the fleet's gauges while the process is in a fleet (feature `redis`), as does the
//! `metrics` facade; JSON holds breakers and bulkheads (the fleet's is `GET /fleet`).
//!
//! ```
//! use fusebox::{metrics, Breaker};
//! Breaker::builder("export-doc").build().unwrap();
//! let text = metrics::prometheus();
//! assert!(text.contains(r#"fusebox_breaker_state{breaker="export-doc",state="closed"} 1"#));
//! ```

mod families;
#[cfg(feature = "serde")]
pub(crate) mod json;
#[cfg(feature = "metrics")]
#[path = "metrics_facade.rs"]
pub mod metrics;
mod prometheus;
pub(crate) mod samples;
mod shadow;

/// The global snapshot in the Prometheus text exposition format, as a `/metrics` endpoint serves it:
/// the same text as `metrics().to_prometheus()`, the fleet's gauges included while joined.
///
/// ```
/// fusebox::Breaker::builder("export-prometheus-doc").build().unwrap();
/// let text = fusebox::metrics::prometheus();
/// assert!(text.contains(r#"fusebox_breaker_stuck{breaker="export-prometheus-doc"} 0"#));
/// ```
pub fn prometheus() -> String {
    crate::metrics::snapshot::metrics().to_prometheus()
}

/// What a higher layer adds to every global snapshot (fleet mode's gauges): set once by that
/// layer, so this layer never imports it, and every output of the snapshot carries them.
static EXTRA: std::sync::OnceLock<fn() -> Vec<samples::Extra>> = std::sync::OnceLock::new();

/// Installs the source of extra samples; the first one installed stays.
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) fn add_to_snapshots(extra: fn() -> Vec<samples::Extra>) {
    let _ = EXTRA.set(extra);
}

/// The extra samples now (none until a higher layer installs its source).
pub(crate) fn extra_samples() -> Vec<samples::Extra> {
    EXTRA.get().map_or_else(Vec::new, |extra| extra())
}

/// The `Content-Type` of [`prometheus`]'s output (text exposition format 0.0.4).
///
/// ```
/// assert!(fusebox::metrics::PROMETHEUS_CONTENT_TYPE.starts_with("text/plain"));
/// ```
pub const PROMETHEUS_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
