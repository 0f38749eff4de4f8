//! The clauses beside the main scenarios of issues 2, 3, 4, 8, 13 to 18 and DESIGN.md's
//! semantics, as a user reads them, through the facade only: every `trip_pNN`, the slow bound
//! itself, the log lines of transitions, half-open judged by the general slow rule, one breaker
//! for an attribute and a layer of the same name, and what is listed before the first call.
//! Every test runs on a paused clock.
//!
//! One module per concept: `trip_percentiles`, `transitions` (the log lines and the recorder),
//! `half_open`, `attribute_and_layer`, `listing` (what the registry lists) and
//! `admission_and_fallbacks` (the call's path through the attributes, and what answers it when
//! refused). The call helper they share is here.
#![cfg(all(feature = "testing", feature = "tower"))]

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use fusebox::tower::BreakerLayer;
use fusebox::{breaker, bulkhead, registry, Breaker, Error, Rejection, State};
use tokio::time::{advance, sleep};
use tower::{Layer, ServiceExt};

#[path = "../common/mod.rs"]
mod common;
use common::{ms, secs, DepError};

/// A call through `b` that answers `ok` after `takes` of virtual time.
async fn call_for(b: &Breaker, takes: Duration, ok: bool) -> Result<(), Error<DepError>> {
    b.call(async move {
        if !takes.is_zero() {
            sleep(takes).await;
        }
        ok.then_some(()).ok_or(DepError::Down)
    })
    .await
}

// One module per concept, each headed by what it covers.
mod admission_and_fallbacks;
mod attribute_and_layer;
mod half_open;
mod listing;
mod transitions;
mod trip_percentiles;
