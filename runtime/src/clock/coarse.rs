//! The coarse clock, and leases on it: how the closed path skips the exact clock while the
//! slot it read there is still the current one (issue 28).
//!
//! # Design
//!
//! A time window puts each call in the slot of the instant it ended, so every recorded call
//! needs the time; reading it exactly (`Instant::now()`, a `clock_gettime` through the vDSO)
//! is most of what a healthy call through a breaker costs. A slot lasts a tenth of the window
//! (3 s by default), so the answer "which slot is now" changes a few times a minute, and the
//! coarse clock (`CLOCK_MONOTONIC_COARSE`: the kernel's time at its last tick, a few loads,
//! about a sixth of the exact read on the benchmarks' VM) is precise enough to tell that it
//! has not changed yet.
//!
//! A **lease** is that statement written down: when a call reads the exact clock, it also
//! notes, on the coarse clock, until when the fact it read (the head slot is current) will
//! surely still hold: the time left in the slot, less two of the coarse clock's ticks (it
//! lags the exact one by up to a tick, at the read and again at the check). A call that finds
//! the coarse clock before the lease uses the fact without reading the exact clock. Past the
//! lease, the next call reads the exact clock and takes the next lease. In real time a lease
//! is exact to within a margin that no caller can observe (a success recorded in the slot it
//! ended in, never one that ended more than a tick before).
//!
//! **A paused tokio clock turns leases off, for the rest of the process.** A paused clock
//! moves only at `advance` and auto-advance, which no coarse clock sees: after `advance(31s)`
//! a lease would put the next call in a slot 31 s old. A paused clock is frozen between two
//! reads with nothing in between (a real clock has nanoseconds and always moves), and an
//! advanced or resumed one is apart from the real time; so before granting a lease the exact
//! clock is read again, and either sign sets a process-wide flag after which no lease is
//! granted or used, as tokio's own `DID_PAUSE_CLOCK` turns its fast path off once any clock
//! was paused. A test's paused runtime is seen at the first call of each breaker (no lease
//! yet, so it reads the exact clock and looks). What is left: a breaker whose lease was
//! taken on a real clock, used by a runtime paused since (`tokio::time::pause()` mid-test,
//! or a paused test sharing a breaker with a real-time one) before any exact read in the
//! process saw a paused clock, records that runtime's successes by the lease until its first
//! failure, slow call or wait reads the exact clock. `tests/slot_clock.rs` pins the exact
//! behaviour under a paused clock.
//!
//! Only where the coarse clock is a vDSO read (Linux, Android) and outside loom's models;
//! elsewhere no lease is ever granted and every call reads the exact clock, as before.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use super::Clock;

/// Set once a lease was asked for on a paused (or advanced) clock: no lease is granted or
/// used after that, in this process. A std atomic in a `static`, as loom has none there (and
/// under loom no lease is granted anyway).
static PAUSED_SEEN: AtomicBool = AtomicBool::new(false);

const NANOS_PER_SEC: u64 = 1_000_000_000;

/// The coarse clock's reading, when leases may be used: `None` once a paused clock was seen
/// in the process, or where there is no cheap coarse clock.
#[inline]
pub(crate) fn now() -> Option<u64> {
    if PAUSED_SEEN.load(Relaxed) {
        return None;
    }
    read()
}

/// A lease: the coarse reading before which a fact read on `clock` at `exact`, true for
/// `holds_for` more nanoseconds of that clock, is surely still true; `None` when no lease
/// can be granted (no coarse clock, a paused clock, or too little time left to be worth it).
/// Reads the exact clock again: a paused clock is told by not having moved.
pub(crate) fn lease(clock: &Clock, exact: u64, holds_for: u64) -> Option<u64> {
    // Checked before anything is read: a window whose slots are shorter than the margin
    // (tens of milliseconds) never gets a lease, and pays nothing for asking.
    if holds_for <= margin() {
        return None;
    }
    let coarse = now()?;
    let again = clock.now();
    if again == exact || Clock::reads_virtual_time() {
        PAUSED_SEEN.store(true, Relaxed);
        return None;
    }
    let left = holds_for
        .checked_sub(again.saturating_sub(exact))?
        .checked_sub(margin())?;
    Some(coarse.saturating_add(left))
}

/// Two of the coarse clock's ticks, at least a millisecond: it lags the exact clock by up to
/// a tick when the lease is taken and again when it is checked.
fn margin() -> u64 {
    static MARGIN: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *MARGIN.get_or_init(|| resolution().saturating_mul(2).max(1_000_000))
}

#[cfg(all(any(target_os = "linux", target_os = "android"), not(loom)))]
#[inline]
fn read() -> Option<u64> {
    use rustix::time::{clock_gettime, ClockId};
    let t = clock_gettime(ClockId::MonotonicCoarse);
    // A monotonic clock's fields are never negative.
    let secs = u64::try_from(t.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(t.tv_nsec).unwrap_or(0);
    Some(secs.saturating_mul(NANOS_PER_SEC).saturating_add(nanos))
}

#[cfg(all(any(target_os = "linux", target_os = "android"), not(loom)))]
fn resolution() -> u64 {
    use rustix::time::{clock_getres, ClockId};
    let t = clock_getres(ClockId::MonotonicCoarse);
    let secs = u64::try_from(t.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(t.tv_nsec).unwrap_or(0);
    secs.saturating_mul(NANOS_PER_SEC).saturating_add(nanos)
}

#[cfg(not(all(any(target_os = "linux", target_os = "android"), not(loom))))]
#[inline]
fn read() -> Option<u64> {
    None
}

#[cfg(not(all(any(target_os = "linux", target_os = "android"), not(loom))))]
fn resolution() -> u64 {
    NANOS_PER_SEC
}

/// Whether leases were turned off in this process (a paused clock was seen).
#[cfg(test)]
pub(crate) fn paused_seen() -> bool {
    PAUSED_SEEN.load(Relaxed)
}
