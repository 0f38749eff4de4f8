//! `#[retry]` alone and composed with `#[breaker]` and `#[bulkhead]`, on a paused clock: one
//! module per concept, what each attempt is (`attempts`), what is never retried (`refusals`),
//! the fallback after the retries (`fallbacks`) and the hooks `retry_on` / `retry_after`
//! (`hints`). The helpers they share are here.

#[path = "../common/mod.rs"]
mod common;

mod attempts;
mod fallbacks;
mod hints;
mod refusals;

pub(crate) use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
pub(crate) use std::time::Duration;

pub(crate) use common::DepError;
pub(crate) use fusebox::{breaker, bulkhead, registry, retry, Rejection};

/// Fails while `n` (the attempt's number, from 1) is below `ok_from`.
pub(crate) fn outcome(n: u32, ok_from: u32) -> Result<u32, DepError> {
    if n < ok_from {
        Err(DepError::Down)
    } else {
        Ok(n)
    }
}
