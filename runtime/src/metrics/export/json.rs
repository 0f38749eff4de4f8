//! How the snapshot's durations serialize: seconds as `f64`, named with an `_s` suffix, so a
//! JSON consumer needs no knowledge of Rust's `Duration` layout.

use std::time::Duration;

use serde::Serializer;

use crate::metrics::snapshot::Metrics;

impl Metrics {
    /// This snapshot as JSON (feature `serde`): the same figures as
    /// [`to_prometheus`](Metrics::to_prometheus), under the field names of the snapshot's
    /// `Serialize`, durations in seconds (`_s`) and shares in percent (`_pct`): what the admin
    /// router's `GET /breakers` answers.
    ///
    /// ```
    /// use fusebox::Breaker;
    /// use fusebox::metrics::Metrics;
    /// let b = Breaker::builder("json-doc").build_detached().unwrap();
    /// let mut m = Metrics::default();
    /// m.breakers.push(b.metrics());
    /// let v: serde_json::Value = serde_json::from_str(&m.to_json()).unwrap();
    /// assert_eq!(v["breakers"][0]["name"], "json-doc");
    /// assert_eq!(v["breakers"][0]["state"], "closed");
    /// ```
    pub fn to_json(&self) -> String {
        // Every field serializes to JSON (strings, numbers, options, sequences; no map keyed by
        // anything but strings), so this cannot fail; say so rather than panic if it ever did.
        serde_json::to_string(self).unwrap_or_else(|e| format!(r#"{{"error":"{e}"}}"#))
    }
}

pub(crate) fn secs<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

pub(crate) fn opt_secs<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&d.as_secs_f64()),
        None => s.serialize_none(),
    }
}
