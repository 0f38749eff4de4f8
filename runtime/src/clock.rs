//! Virtual-clock friendly time: nanoseconds since a base `tokio::time::Instant`.
//!
//! Storing offsets as `u64` lets deadlines live in atomics; reading them through
//! `tokio::time` keeps every test and simulation on a paused clock.

use std::time::Duration;
use tokio::time::Instant;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    base: Instant,
}

impl Clock {
    pub(crate) fn new() -> Clock {
        Clock {
            base: Instant::now(),
        }
    }

    /// Nanoseconds since the base; saturates at zero for instants before it.
    pub(crate) fn nanos(&self, at: Instant) -> u64 {
        // u64 arithmetic (no u128 multiply): saturates after ~584 years.
        let d = at.saturating_duration_since(self.base);
        d.as_secs()
            .saturating_mul(1_000_000_000)
            .saturating_add(u64::from(d.subsec_nanos()))
    }

    pub(crate) fn now(&self) -> u64 {
        self.nanos(Instant::now())
    }

    pub(crate) fn instant(&self, nanos: u64) -> Instant {
        self.base + Duration::from_nanos(nanos)
    }
}

/// A duration in nanoseconds, saturating: the settings crate's, so settings and deadlines agree.
pub(crate) use fusebox_settings::nanos;
