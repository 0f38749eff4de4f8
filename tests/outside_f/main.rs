//! The earlier rounds' issues 16 (tower layers), 17 (adaptive bulkheads), 19 (the operator's
//! page), 21 (fleet mode) and 22 (probes and the ramp), tested again as a user reads them (the
//! issues' text, DESIGN.md, the README, the guides and the rustdoc), through the facade only,
//! after this round's rewrites of the core, the settings and the macros.
//!
//! Paused-clock tests make no IO; the ones on real sockets run on real time, where every wait
//! has a deadline and polls. Each test uses names of its own: they share the process's registry.
//!
//! One module per issue (`tower_layers`, `adaptive`, `probes_and_ramp`, `operator_page`,
//! `fleet_auth`) or where they meet (`layers_settings_keys`, `spawned_fallbacks`).
#![cfg(all(
    feature = "admin",
    feature = "tower",
    feature = "testing",
    feature = "serde",
    feature = "redis"
))]

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

#[allow(dead_code)]
#[path = "../browser/mod.rs"]
mod browser;
#[path = "../fleet_support/mod.rs"]
mod fleet_support;

use fusebox::tower::{BreakerLayer, BulkheadLayer, FallbackLayer};
use fusebox::{breaker, bulkhead, registry, Breaker, Bulkhead, Error, Rejection, State};
use tokio::time::advance;
use tower::{service_fn, Layer, Service, ServiceExt};

#[path = "../common/mod.rs"]
mod common;
use common::{ms, secs};

/// A dependency's error, the way a client writes one.
#[derive(Debug, Clone, PartialEq)]
enum DepError {
    Down,
    Refused(Rejection),
}

impl From<Rejection> for DepError {
    fn from(r: Rejection) -> Self {
        DepError::Refused(r)
    }
}

// One module per issue or concept, each headed by what it tests.
mod adaptive;
mod fleet_auth;
mod layers_settings_keys;
mod operator_page;
mod probes_and_ramp;
mod spawned_fallbacks;
mod tower_layers;
