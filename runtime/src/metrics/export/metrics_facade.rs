//! Publishing the snapshot through the [`metrics`](https://docs.rs/metrics) crate facade, so
//! whatever exporter the application installed (Prometheus, StatsD, OpenTelemetry bridges)
//! sees breaker and bulkhead figures under the same names as [`to_prometheus`](crate::metrics::Metrics::to_prometheus).
//!
//! Gauges are `set`; counters are lifetime totals, published with `absolute`.
//!
//! ```
//! use std::time::Duration;
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! // Once, at start-up, after installing a recorder:
//! let reporter = tokio::spawn(fusebox::metrics::facade::report_every(Duration::from_secs(10)));
//! # reporter.abort();
//! # }
//! ```

use std::time::Duration;

use ::metrics::{counter, describe_counter, describe_gauge, gauge, Label};

use super::samples::{visit, Family, Kind, Num, Sink};
use crate::error::ConfigError;
use crate::metrics::snapshot::{metrics, Metrics};

/// Publishes the global snapshot once to the installed `metrics` recorder.
///
/// ```
/// fusebox::Breaker::builder("facade-doc").build().unwrap();
/// fusebox::metrics::facade::record(); // a no-op without a recorder
/// ```
pub fn record() {
    record_snapshot(&metrics());
}

/// Publishes one snapshot to the installed `metrics` recorder.
///
/// ```
/// use fusebox::Breaker;
/// use fusebox::metrics::Metrics;
/// let b = Breaker::builder("facade-snapshot-doc").build_detached().unwrap();
/// let mut m = Metrics::default();
/// m.breakers.push(b.metrics());
/// fusebox::metrics::facade::record_snapshot(&m);
/// ```
pub fn record_snapshot(m: &Metrics) {
    visit(m, &mut Facade);
}

/// Publishes the global snapshot every `period`, forever; spawn it on the application's runtime.
///
/// Missed ticks are skipped rather than bunched: a late report carries the newest figures anyway.
/// A zero period returns `Err(ConfigError::ZeroDuration)` at once (tokio's `interval` would
/// panic); otherwise it never returns.
///
/// ```
/// use std::time::Duration;
/// use fusebox::settings::ConfigError;
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let reporter = tokio::spawn(fusebox::metrics::facade::report_every(Duration::from_secs(15)));
/// // ... on shutdown:
/// reporter.abort();
/// let zero = fusebox::metrics::facade::report_every(Duration::ZERO).await;
/// assert_eq!(zero, Err(ConfigError::ZeroDuration { field: "report_every" }));
/// # }
/// ```
pub async fn report_every(period: Duration) -> Result<(), ConfigError> {
    if period.is_zero() {
        return Err(ConfigError::ZeroDuration {
            field: "report_every",
        });
    }
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tick.tick().await;
        record();
    }
}

struct Facade;

impl Sink for Facade {
    fn family(&mut self, f: &Family) {
        match f.kind {
            Kind::Counter => describe_counter!(f.name, f.help),
            Kind::Gauge => describe_gauge!(f.name, f.help),
        }
    }

    fn sample(&mut self, f: &Family, labels: &[(&'static str, &str)], value: Num) {
        let labels: Vec<Label> = labels
            .iter()
            .map(|&(k, v)| Label::new(k, v.to_owned()))
            .collect();
        match (f.kind, value) {
            (Kind::Counter, Num::Int(n)) => counter!(f.name, labels).absolute(n),
            (Kind::Gauge, Num::Int(n)) => gauge!(f.name, labels).set(n as f64),
            (_, Num::Float(x)) => gauge!(f.name, labels).set(x),
        }
    }
}
