//! Shared by the attribute tests: a dependency error type the way a service writes one.
#![allow(dead_code)]

use std::time::Duration;

use fusebox::Rejection;

/// `n` milliseconds: durations in tests read as they are written.
pub const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// `n` seconds.
pub const fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// The `p` quantile (0..=1) of `xs` by nearest rank; zero for no samples.
pub fn percentile(mut xs: Vec<Duration>, p: f64) -> Duration {
    if xs.is_empty() {
        return Duration::ZERO;
    }
    xs.sort();
    let i = ((xs.len() as f64 * p).ceil() as usize).clamp(1, xs.len()) - 1;
    xs[i]
}

/// What a client of a dependency returns.
#[derive(Debug, Clone, PartialEq)]
pub enum DepError {
    /// The dependency answered "no such thing": not its failure.
    NotFound,
    /// The dependency failed.
    Down,
    /// fusebox refused or cut the call short.
    Unavailable(Rejection),
}

impl From<Rejection> for DepError {
    fn from(r: Rejection) -> Self {
        DepError::Unavailable(r)
    }
}

impl DepError {
    pub fn is_open(&self) -> bool {
        matches!(self, DepError::Unavailable(Rejection::Open { .. }))
    }
}

/// `failure = counts`: a "not found" is the dependency answering.
pub fn counts(e: &DepError) -> bool {
    !matches!(e, DepError::NotFound)
}
