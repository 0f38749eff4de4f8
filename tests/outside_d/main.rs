//! `#[breaker]` and `#[bulkhead]` as DESIGN.md's contract and the attribute reference promise
//! them to a user, through the facade only: rejections counted by reason, the bulkhead's figures,
//! cancelled and panicking calls, an open breaker that takes no permit, generic functions with
//! fallbacks that borrow the arguments, the JSON and Prometheus forms of the snapshot, and the
//! paths of the contract and of earlier releases. Every test runs on a paused clock.
//!
//! One module per concept: rejections and the bulkhead's figures (`rejections`), the states a
//! call drives (`state_machine`), generic functions, methods and keys (`functions_and_keys`),
//! the snapshot's forms (`snapshot`) and the contract's paths (`contract_paths`). The client
//! error, the metrics readers and the clients whose default name is the crate root's are here.

use std::future::pending;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::time::Duration;

use fusebox::{breaker, bulkhead, registry, Error, Rejection, State};
use tokio::time::advance;

#[path = "../common/mod.rs"]
mod common;
use common::ms;

#[derive(Debug, Clone, PartialEq)]
enum DepError {
    Down,
    Rejected(Rejection),
}

impl From<Rejection> for DepError {
    fn from(r: Rejection) -> Self {
        DepError::Rejected(r)
    }
}

fn breaker_metrics(name: &str) -> fusebox::metrics::BreakerMetrics {
    registry().breaker(name).expect("listed").metrics()
}

fn bulkhead_metrics(name: &str) -> fusebox::metrics::BulkheadMetrics {
    fusebox::metrics()
        .bulkheads
        .into_iter()
        .find(|b| b.name == name)
        .expect("listed")
}

// Two types' `get` in one module, under one default name: `outside_d::clients::get`, which
// `functions_and_keys` looks up. The module stays here at the crate root: anywhere else, the
// default name would carry that module's path too.
mod clients {
    use super::DepError;
    use fusebox::breaker;

    pub struct Payments;
    pub struct Addresses;

    impl Payments {
        #[breaker(window_calls = 2, min_calls = 2)]
        pub async fn get(&self) -> Result<u8, DepError> {
            Err(DepError::Down)
        }
    }

    impl Addresses {
        #[breaker(window_calls = 2, min_calls = 2)]
        pub async fn get(&self) -> Result<u8, DepError> {
            Ok(1)
        }
    }
}

// One module per concept, each headed by what it covers.
mod contract_paths;
mod functions_and_keys;
mod rejections;
mod snapshot;
mod state_machine;
