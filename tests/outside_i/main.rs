//! Issue 26's real run as its text tells it, written the way a user writes the service: a
//! checkout on loopback (axum, real TCP) whose every request holds one of 20 "database
//! connections"; `/orders` at 200 requests a second and `/checkout` at 50, open loop, over real
//! HTTP; `/checkout` verifies the payment through an annotated fn calling a real HTTP payment
//! dependency that answers in 20 ms, then in 8 s for 25 s, then in 20 ms again.
//!
//! The table, at the margins: `/orders` 100 % answered with a small p99 through
//! the whole run; the breaker opens within 3 s of the slowdown; `/checkout` is verified again
//! (a real answer, not the fallback) and the breaker closed within 15 s of the healing; while
//! open, checkout answers at once with the fallback. One test per breaker line the issue names,
//! each behind `#[bulkhead(pool = 5)]`: the design card's line, and the timeout alone; and the
//! card's line behind `#[bulkhead(limit = "adaptive")]`, which the issue allows in place of the
//! pool (its stall guard keeps the limit from taking all 20 connections when payments stops
//! answering). Each prints its figures. Real sockets and real time, about 45 s (the three run
//! side by side).
//!
//! Last, the same slowdown on a paused clock for the timeout alone at 30 to 50 calls a second:
//! it opened 2 s in at 50, 3.1 s in at 45 until refusals behind timed-out calls counted.
//!
//! One module per part: the service as its author writes it (`service`), the open-loop load
//! and what a run saw (`load`), the table for each breaker line (`breaker_lines`), and
//! the paused-clock rates (`paused_rates`). The payment's answer, its error and the fallback,
//! which the service and the paused runs share, are here.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State as Shared;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use fusebox::{breaker, bulkhead, Error, Rejection, State};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::{interval, sleep, sleep_until, Instant, MissedTickBehavior};

#[path = "../common/mod.rs"]
mod common;
use common::{ms, percentile, secs};

/// How long the dependency is healthy before the slowdown, slow, and the most the run waits
/// for it to come back.
const HEALTHY: Duration = secs(3);
const SLOW_FOR: Duration = secs(25);
const BACK_WITHIN: Duration = secs(15);

#[derive(Debug, PartialEq)]
enum Verification {
    Verified,
    WillConfirmByEmail,
}

#[derive(Debug)]
enum PayError {
    Http(reqwest::Error),
    Unavailable(Rejection),
}

impl From<reqwest::Error> for PayError {
    fn from(e: reqwest::Error) -> Self {
        PayError::Http(e)
    }
}

impl From<Rejection> for PayError {
    fn from(r: Rejection) -> Self {
        PayError::Unavailable(r)
    }
}

/// The typed "we'll confirm by email" answer to every refusal and every failure.
fn confirm_by_email(_err: Error<PayError>) -> Result<Verification, PayError> {
    Ok(Verification::WillConfirmByEmail)
}

// One module per part of the run, each headed by what it holds.
mod breaker_lines;
mod load;
mod paused_rates;
mod service;
