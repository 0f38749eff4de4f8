//! The earlier rounds' issues 2, 4, 7, 8, 15 and 18 as a user reads them (the text,
//! DESIGN.md, the README, the guides and the rustdoc), through the facade only: the state
//! machine and its policies, bulkheads, the registry and the snapshot, the exports and the admin
//! router, behaviour under cancellation, panics and bad input, test scopes and stale values,
//! half-open judged by latency, fallbacks that see the call, and the hardening of keys, stale
//! values, abandoned trials and forced states. Paused clock unless a test says otherwise.
//!
//! One module per concept (`state_machine`, `registry_and_snapshot`, `admin`...), each headed by
//! the issue that asked for it; the shared client error and call helpers are here.
#![cfg(all(feature = "testing", feature = "admin", feature = "serde"))]

use std::future::pending;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use fusebox::events::Reason;
use fusebox::{breaker, bulkhead, registry, Breaker, Bulkhead, Error, Rejection, State};
use tokio::sync::Notify;
use tokio::time::advance;

#[path = "../common/mod.rs"]
mod common;
use common::{ms, secs};

/// A client's error as a service writes one.
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

/// A call through `b` that answers `ok` after `takes` of virtual time.
async fn call_for(b: &Breaker, takes: Duration, ok: bool) -> Result<(), Error<DepError>> {
    b.call(async move {
        if !takes.is_zero() {
            tokio::time::sleep(takes).await;
        }
        ok.then_some(()).ok_or(DepError::Down)
    })
    .await
}

/// Whether a call through `b` reached the dependency (it is made to succeed).
async fn admitted(b: &Breaker) -> bool {
    let ran = AtomicU32::new(0);
    let _ = b
        .call(async {
            ran.fetch_add(1, SeqCst);
            Ok::<(), DepError>(())
        })
        .await;
    ran.load(SeqCst) == 1
}

// One module per concept, each of its tests as the issue that asked for it reads.
mod admin;
mod bad_input;
mod cancellation;
mod classification;
mod design_card;
mod exports;
mod growth;
mod hardening;
mod percentiles;
mod real_time;
mod registry_and_snapshot;
mod rejections;
mod scopes;
mod stale;
mod state_machine;
mod tenants;
mod trials_under_load;
mod windows;
