//! Clauses of issues 19-32 and of DESIGN.md's contract that sit beside the main scenario each
//! earlier test pinned, checked through the public `fusebox` facade as a user would: where two
//! features meet (a retry and an ignored error, a fallback and `failure_if_ok`, a ramp and a
//! keyed breaker, a live change and the derived defaults). Every test runs on a paused clock.
//!
//! One module per place where features meet: `retries`, `outcomes` (the fallback, the last
//! good value and a shadow per outcome), `stale`, `probes`, `responses`, `listing`,
//! `settings_forms` (text, environment and pattern overrides) and `metrics_facade`. The client
//! error and its classifiers are here.
#![cfg(all(
    feature = "tower",
    feature = "serde",
    feature = "testing",
    feature = "admin",
    feature = "metrics"
))]

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::Mutex;

use fusebox::call::{Completion, Outcome};
use fusebox::{breaker, bulkhead, registry, retry, Breaker, Bulkhead, Error, Rejection, State};
use tokio::time::advance;

#[path = "../common/mod.rs"]
mod common;
use common::{ms, secs};

/// A client's error: the dependency failing, answering "not found", a request refused before
/// it was sent, or fusebox refusing.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ApiError {
    Down,
    NotFound,
    Invalid,
    Refused(Rejection),
}

impl From<Rejection> for ApiError {
    fn from(r: Rejection) -> Self {
        ApiError::Refused(r)
    }
}

/// `failure = counted`: a "not found" is the dependency answering.
fn counted(e: &ApiError) -> bool {
    !matches!(e, ApiError::NotFound)
}

/// `ignore = client_side`: refused before the dependency was reached.
fn client_side(e: &ApiError) -> bool {
    matches!(e, ApiError::Invalid)
}

fn classify(r: &Result<u16, ApiError>) -> Outcome {
    match r {
        Err(ApiError::Invalid) => Outcome::Ignored,
        Err(_) => Outcome::Failure,
        Ok(_) => Outcome::Success,
    }
}

// One module per concept, each headed by what it covers.
mod listing;
mod metrics_facade;
mod outcomes;
mod probes;
mod responses;
mod retries;
mod settings_forms;
mod stale;
