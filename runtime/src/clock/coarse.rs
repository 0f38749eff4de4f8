//! The coarse clock: how the closed path and the open refusal skip the exact clock when a
//! coarse reading settles their question (issue 28).
//!
//! # Design
//!
//! A time window puts each call in the slot of the instant it ended, and an open breaker
//! refuses until its deadline, so both paths need the time on every call; reading it exactly
//! (`Instant::now()`, a `clock_gettime` through the vDSO) was most of what a healthy call
//! through a breaker, and a refused one, cost. But their questions are coarse: "is it still
//! this 3 s slot?", "is the 30 s open period still on?". The coarse clock
//! (`CLOCK_MONOTONIC_COARSE`: the kernel's time at its last tick, a few loads, about a sixth
//! of the exact read on the benchmarks' VM) answers them except within a tick of an edge.
//!
//! A [`Span`] is the coarse clock turned into this module's clock (nanoseconds since the
//! process's base): the exact time lies within it, `earliest..=latest`. The coarse clock is
//! the kernel's time at its last update, never ahead of the exact one, so `earliest` is it,
//! and `latest` is a margin later: four of its ticks, at least 16 ms, where it lagged by 3
//! to 7 ms on the benchmarks' VM (4 ms ticks). A caller whose answer is the same anywhere in
//! the reading uses it; one near an edge reads the exact clock, as every call did before. In
//! real time a call is put in the slot it ended in, and refused only before its deadline, as
//! by an exact read: nothing a caller can observe changes. What moves: `retry_in` of a
//! refusal may say up to a margin more than is left (never more than the open period).
//!
//! **A paused tokio clock gets no reading.** A paused clock moves only at `advance` and
//! auto-advance, which no real clock sees: after `advance(31s)` a coarse reading would put
//! the next call in a slot 31 s old. So each thread checks its clock before it uses the
//! coarse one, and again at every tick of it: a paused clock is frozen between two reads with
//! nothing in between (a real clock has nanoseconds and always moves), and an advanced or
//! resumed one is apart from the real time. Either sign turns coarse readings off for the
//! rest of the process (as tokio's own `DID_PAUSE_CLOCK` turns its fast path off once any
//! clock was paused). A test's runtime is checked at its first call of a breaker (each test
//! runs on a thread of its own). What is left: on a thread whose clock was seen real, a
//! clock paused since (`tokio::time::pause()` mid-test, or a paused runtime built on the same
//! thread) gets coarse readings until the coarse clock ticks (4 ms on most kernels), if no
//! paused clock was seen in the process before. `tests/slot_clock.rs` pins the exact
//! behaviour under a paused clock.
//!
//! What the check costs: three exact reads, once per thread per tick. A thread that calls a
//! breaker less often than every tick (a few ms) pays it on every call, about three times the
//! one exact read it replaces (~80 ns more here), at a rate where neither shows.
//!
//! Only where the coarse clock is a vDSO read (Linux, Android) and outside loom's models;
//! elsewhere [`now`] is `None` and every caller reads the exact clock, as before.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::Duration;

use super::Clock;

/// Where the exact time lies, read from the coarse clock: `earliest..=latest`, in the
/// nanoseconds of [`Clock::now`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    pub(crate) earliest: u64,
    pub(crate) latest: u64,
}

impl Span {
    /// An exact read: one instant.
    pub(crate) fn exact(now: u64) -> Span {
        Span {
            earliest: now,
            latest: now,
        }
    }

    /// Whether this is one instant (an exact read).
    pub(crate) fn is_exact(&self) -> bool {
        self.earliest == self.latest
    }
}

/// Set once a paused (or advanced) clock was seen: no reading after that, in this process.
/// A std atomic in a `static`, as loom has none there (under loom there is no reading anyway).
static PAUSED_SEEN: AtomicBool = AtomicBool::new(false);

/// This thread's clock, as last checked: real until the coarse clock reads `until`; with the
/// process's [`Fixed`] figures, kept here so that a reading loads nothing shared.
#[derive(Clone, Copy)]
struct Checked {
    until: u64,
    offset: u64,
    margin: u64,
}

thread_local! {
    static CHECKED: Cell<Checked> = const {
        Cell::new(Checked { until: 0, offset: 0, margin: 0 })
    };
}

const NANOS_PER_SEC: u64 = 1_000_000_000;
/// The least margin (`Fixed::margin`): 16 ms.
const MIN_MARGIN: u64 = 16_000_000;
/// Tokio's time apart from the real time by more than this: a clock paused or advanced.
const APART: Duration = Duration::from_millis(1);

/// The coarse clock's reading: `None` once a paused clock was seen in the process, where
/// there is no cheap coarse clock, or when this thread's clock is not a real one.
#[inline]
pub(crate) fn now() -> Option<Span> {
    if PAUSED_SEEN.load(Relaxed) {
        return None;
    }
    let coarse = read()?;
    let mut checked = CHECKED.try_with(Cell::get).ok()?;
    if coarse >= checked.until {
        checked = check(coarse)?;
    }
    let earliest = coarse.wrapping_add(checked.offset);
    Some(Span {
        earliest,
        latest: earliest.saturating_add(checked.margin),
    })
}

/// Checks this thread's clock at coarse reading `coarse`: real until the next tick, or
/// paused (no readings for the process from now on).
#[cold]
fn check(coarse: u64) -> Option<Checked> {
    let clock = Clock::new();
    let first = clock.now();
    let real = clock.nanos(tokio::time::Instant::from_std(std::time::Instant::now()));
    let again = clock.now();
    let apart = again.abs_diff(real) > crate::clock::nanos(APART);
    if again == first || apart {
        PAUSED_SEEN.store(true, Relaxed);
        return None;
    }
    let fixed = FIXED.get_or_init(Fixed::measure);
    let checked = Checked {
        // Checked again once the coarse clock moves on: a tick (a few ms) later.
        until: coarse.saturating_add(1),
        offset: fixed.offset,
        margin: fixed.margin,
    };
    CHECKED.try_with(|c| c.set(checked)).ok()?;
    Some(checked)
}

/// What converts a coarse reading, measured once.
struct Fixed {
    /// What turns the monotonic clock's nanoseconds into [`Clock::now`]'s on the real clock,
    /// added with wrapping (the base may lie before the monotonic clock's zero): a constant,
    /// as both count the same clock (`std::time::Instant` is `CLOCK_MONOTONIC` here).
    offset: u64,
    /// How far the coarse clock may lag the exact one: four of its ticks, at least 16 ms.
    /// It is the kernel's time at its last update, which on the benchmarks' VM (4 ms
    /// ticks) lagged by 3 to 7 ms; twice that is a margin no call near an edge pays much
    /// for (the exact read, for the last 0.5 % of a 3 s slot).
    margin: u64,
}

static FIXED: OnceLock<Fixed> = OnceLock::new();

impl Fixed {
    fn measure() -> Fixed {
        let clock = Clock::new();
        // Of a few paired reads, the one least split by a preemption.
        let offset = (0..5)
            .filter_map(|_| {
                let before = exact()?;
                let ours = clock.nanos(tokio::time::Instant::from_std(std::time::Instant::now()));
                let after = exact()?;
                let split = after.saturating_sub(before);
                Some((split, ours.wrapping_sub(before + split / 2)))
            })
            .min()
            .map_or(0, |(_, offset)| offset);
        Fixed {
            offset,
            margin: resolution().saturating_mul(4).max(MIN_MARGIN),
        }
    }
}

#[cfg(all(any(target_os = "linux", target_os = "android"), not(loom)))]
mod source {
    use rustix::time::{clock_getres, clock_gettime, ClockId, Timespec};

    #[inline]
    fn nanos(t: Timespec) -> u64 {
        // A monotonic clock's fields are never negative, and its seconds are far from the
        // 584 years that would wrap.
        (t.tv_sec as u64)
            .wrapping_mul(super::NANOS_PER_SEC)
            .wrapping_add(t.tv_nsec as u64)
    }

    #[inline]
    pub(super) fn read() -> Option<u64> {
        Some(nanos(clock_gettime(ClockId::MonotonicCoarse)))
    }

    pub(super) fn exact() -> Option<u64> {
        Some(nanos(clock_gettime(ClockId::Monotonic)))
    }

    pub(super) fn resolution() -> u64 {
        nanos(clock_getres(ClockId::MonotonicCoarse))
    }
}

#[cfg(not(all(any(target_os = "linux", target_os = "android"), not(loom))))]
mod source {
    #[inline]
    pub(super) fn read() -> Option<u64> {
        None
    }

    pub(super) fn exact() -> Option<u64> {
        None
    }

    pub(super) fn resolution() -> u64 {
        super::NANOS_PER_SEC
    }
}

use source::{exact, read, resolution};
