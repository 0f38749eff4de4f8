//! How the snapshot's durations serialize: seconds as `f64`, named with an `_s` suffix, so a
//! JSON consumer needs no knowledge of Rust's `Duration` layout.

use std::time::Duration;

use serde::Serializer;

pub(crate) fn secs<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

pub(crate) fn opt_secs<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&d.as_secs_f64()),
        None => s.serialize_none(),
    }
}
