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
//! first recorded call (`window/time.rs`), deadlines from the instant their caller read. (Only
//! `time_in_state` of a breaker that never changed state does: on a clock behind its
//! creation it reads zero.)
//!
//! # Why the time window reads this clock, exactly, on every recorded call
//!
//! A time window puts each call in the slot of the instant it ended, so the closed path
//! reads the clock once per call (a call that answered in its first poll reads it only for
//! this; `Permit::poll_drive` times nothing else). Issue 28 asked for a coarse clock for slot
//! selection that stays virtual under a paused tokio clock. Designed, weighed twice, and not
//! built, because no such clock exists without giving up one of the two:
//!
//! - **Virtual.** Under `test-util`, `tokio::time::Instant::now()` asks the current runtime's
//!   clock (through the runtime context, under the clock's mutex once any clock in the
//!   process was ever paused). A paused clock moves only at `advance` and at auto-advance,
//!   both inside tokio, and nothing outside tokio can observe that it moved except by reading
//!   it. Any cache of the time (per thread, per window, refreshed every N calls or every real
//!   millisecond) would, after `advance(31s)`, put the next call in a slot 31 s old: it
//!   expires 31 s early and the next failure judges a window without it. That is a change of
//!   behaviour every paused-clock test can see (`advance`, then call, then assert a trip:
//!   `tests/slot_clock.rs` does, for calls that answer in their first poll), so a cache must
//!   be off whenever a clock may be paused, and tokio does not say whether one is
//!   (`DID_PAUSE_CLOCK` is private; `Handle::try_current` costs a reference count, more than
//!   it saves, and says nothing about pausing). A cache shared between threads is wrong even
//!   then: every paused runtime (one per `#[tokio::test]`, run in parallel) has a virtual
//!   time of its own, and one breaker (a `static` site's) serves them all.
//! - **Coarse.** The cheap real-time sources are `CLOCK_MONOTONIC_COARSE` (through `libc`, so
//!   `unsafe` or a new dependency), the TSC (an `unsafe` intrinsic), or a thread that
//!   updates an atomic every millisecond (a thread per process, real time only, so never
//!   virtual, and late by however long the scheduler keeps it off a loaded core, so even
//!   its real-time error has no bound). std's `Instant` is the exact clock and nothing
//!   cheaper.
//! - **What it would buy.** On the 2-core VM the benchmarks run on, `Instant::now()` costs
//!   16 ns (a `clock_gettime` through the vDSO, `tsc` clock source) of the closed path's
//!   ~100 ns, and recloser, the fastest peer, reads the same clock on its open path. The rest
//!   of the gap was instructions (`BENCHMARKS.md`), which issue 28 went after instead.
//!
//! So slots come from the exact clock, and the cost is kept down elsewhere: the clock is read
//! once per call, never when a call cannot be recorded, and slot selection is one multiply
//! and compare on that reading (`window/time.rs`). A count window (`window_calls`) reads no
//! clock at all on its closed path. Should tokio expose whether the current clock can be
//! paused, a per-thread cache refreshed at each coarse tick, bypassed when it can, would fit
//! behind `Clock::now` without touching a caller.

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
