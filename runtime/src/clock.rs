//! Virtual-clock friendly time: nanoseconds since one process-wide base `tokio::time::Instant`.
//!
//! Storing offsets as `u64` lets deadlines live in atomics; reading them through
//! `tokio::time` keeps every test and simulation on a paused clock.
//!
//! Why one base for the process, set back before the process began: every runtime has a clock
//! of its own, and a paused one starts at the real instant its runtime was built and stands
//! still. A base taken from whichever runtime first touched the registry (as it once was) can
//! lie ahead of another runtime's frozen clock; that runtime's times then saturate at the base,
//! and an open period it starts ends late by the gap between the two runtimes. Every clock,
//! paused or not, reads an instant no earlier than its runtime's creation, which is after the
//! process started, so a base set back further than the process has been running is behind
//! all of them, whichever came first.

use std::sync::OnceLock;
use std::time::Duration;
use tokio::time::Instant;

/// How far before its first use the base is set: more than a test process or a service runs
/// before it first touches a breaker. Tried in turn, for platforms whose `Instant` cannot go
/// that far back (one that counts from boot, on a machine booted a minute ago).
const BACKDATE: [Duration; 4] = [
    Duration::from_secs(7 * 24 * 3600),
    Duration::from_secs(3600),
    Duration::from_secs(60),
    Duration::ZERO,
];

/// The process's one time base, read outside any runtime (a real instant).
fn base() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(|| {
        let now = std::time::Instant::now();
        let back = BACKDATE
            .iter()
            .find_map(|d| now.checked_sub(*d))
            .unwrap_or(now);
        Instant::from_std(back)
    })
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    base: Instant,
}

impl Clock {
    pub(crate) fn new() -> Clock {
        Clock { base: base() }
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn every_clock_shares_one_base_behind_the_present() {
        let (a, b) = (Clock::new(), Clock::new());
        assert_eq!(a.base, b.base);
        assert!(a.now() > 0, "the base lies before now");
        let later = Instant::now() + Duration::from_secs(1);
        assert_eq!(a.instant(a.nanos(later)), later);
    }
}
