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
//! all of them, whichever came first. For the same reason a breaker's behaviour never counts
//! from its creation on the creating runtime's clock: a time window's slots count from its
//! first recorded call (`window/time/`), deadlines from the instant their caller read. (Only
//! `time_in_state` of a breaker that never changed state does: on a clock behind its
//! creation it reads zero.)
//!
//! # The coarse clock (`coarse.rs`)
//!
//! A time window puts each call in the slot of the instant it ended, and an open breaker
//! refuses until its deadline, so the closed path and the open refusal need the time on
//! every call. Issue 28 asked for a coarse clock for slot selection that stays virtual under
//! a paused tokio clock. No clock outside tokio sees a paused one move, so the coarse clock
//! is only a reading of the real time in this clock's nanoseconds, with the span the exact
//! time lies in; a caller whose answer is the same anywhere in it uses it, and no thread
//! gets a reading while its clock is paused. `coarse.rs` has the design and what it leaves;
//! its users are `window/time/`'s `record_success` and `breaker/open.rs`'s refusal.
//!
//! Tried before and weighed against it: a per-thread or per-window cache of the time,
//! refreshed every N calls or every real millisecond (after `advance(31s)` the next call
//! lands in a slot 31 s old, and every paused runtime has a time of its own while one
//! breaker serves them all); the TSC (an `unsafe` intrinsic, and no cheaper than the vDSO
//! on the VM); a thread that updates an atomic (real time only, and late by however long
//! the scheduler keeps it off a core).

pub(crate) mod coarse;

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
    #[inline]
    pub(crate) fn new() -> Clock {
        Clock { base: base() }
    }

    /// Nanoseconds since the base; saturates at zero for instants before it.
    #[inline]
    pub(crate) fn nanos(&self, at: Instant) -> u64 {
        // u64 arithmetic (no u128 multiply): saturates after ~584 years.
        let d = at.saturating_duration_since(self.base);
        d.as_secs()
            .saturating_mul(1_000_000_000)
            .saturating_add(u64::from(d.subsec_nanos()))
    }

    #[inline]
    pub(crate) fn now(&self) -> u64 {
        self.nanos(Instant::now())
    }

    pub(crate) fn instant(&self, nanos: u64) -> Instant {
        self.base + Duration::from_nanos(nanos)
    }

    /// Whether the caller's clock is a paused (virtual) one, as far as can be told: tokio's
    /// time apart from the real time by more than a millisecond. Every paused runtime
    /// (`#[tokio::test(start_paused = true)]`) has a time of its own, so what a reader on
    /// one may do to a breaker whose calls run on another is less than a reader on the real
    /// clock may (`Core::stuck_seen`). A paused clock read within a millisecond of its
    /// runtime's start, and never advanced, reads as real: it is then not ahead of anyone.
    pub(crate) fn reads_virtual_time() -> bool {
        let (virt, real) = (Instant::now().into_std(), std::time::Instant::now());
        virt.max(real) - virt.min(real) > Duration::from_millis(1)
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
