//! Issues 26 and 31 as a user reads them (the text, DESIGN.md, the README and the
//! rustdoc), through the facade only: outcomes (ignored errors, failures inside `Ok`, the
//! half-open bound, forced closed with and without recording) and the defaults a breaker
//! derives from its `timeout` alone. Every test runs on a paused clock.
//!
//! One module per concept: issue 31's closed window (`closed_window`), an `Ok` that is a
//! failure (`ok_as_failure`), half-open (`half_open`), forced closed (`forced_closed`),
//! methods and trait objects (`methods`), the builder and tower (`builder_and_tower`), and
//! issue 26's breaker given only the dependency's timeout (`timeout_alone`). The client error,
//! the classifiers and the metrics reader they share are here.

use std::sync::atomic::{AtomicU16, AtomicU32, Ordering::SeqCst};
use std::time::Duration;

use fusebox::call::{Completion, Outcome};
use fusebox::{breaker, bulkhead, registry, Breaker, Error, Rejection, State};
use tokio::time::advance;

#[path = "../common/mod.rs"]
mod common;
use common::{ms, secs};

/// A client's error: the dependency failing, answering "not found", or a request refused
/// before it was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ApiError {
    Down,
    NotFound,
    Invalid,
    Refused,
}

impl From<Rejection> for ApiError {
    fn from(_: Rejection) -> Self {
        ApiError::Refused
    }
}

fn invalid(e: &ApiError) -> bool {
    *e == ApiError::Invalid
}

fn server_error(status: &u16) -> bool {
    *status >= 500
}

fn metrics(name: &str) -> fusebox::metrics::BreakerMetrics {
    registry().breaker(name).unwrap().metrics()
}

// One module per concept, each headed by what it covers.
mod builder_and_tower;
mod closed_window;
mod forced_closed;
mod half_open;
mod methods;
mod ok_as_failure;
mod timeout_alone;
