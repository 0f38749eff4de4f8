//! Forced states: an operator's override, held until changed or for a given time. A forced
//! state that lapses is ended lazily, on admission and by the metrics, so no timer task runs.

use std::time::Duration;

use super::core::{Core, NEVER};
use super::events::Reason;
use crate::clock::nanos;
use crate::state::{State, Word};
use crate::sync::atomic::Ordering::*;
use crate::sync::lock;

/// Set in a forced state's `until` when it records nothing: virtual nanoseconds never reach
/// bit 62 (146 years), and a flag in the deadline's word keeps the breaker within 1 KiB.
const UNRECORDED: u64 = 1 << 62;

fn encode(until: u64, recording: bool) -> u64 {
    if recording {
        until & !UNRECORDED
    } else {
        until | UNRECORDED
    }
}

/// The deadline without the flag; `NEVER` keeps every other bit set, so it comes back whole.
fn decode(raw: u64) -> u64 {
    let v = raw & !UNRECORDED;
    if v == NEVER & !UNRECORDED {
        NEVER
    } else {
        v
    }
}

impl Core {
    /// Forces `to` (a forced state, or `Closed` for a reset), lapsing after `for_` if given.
    pub(crate) fn force(&self, to: State, reason: Reason, for_: Option<Duration>, now: u64) {
        self.force_recording(to, reason, for_, true, now);
    }

    /// [`force`](Self::force), saying whether a forced-closed breaker records its calls.
    pub(crate) fn force_recording(
        &self,
        to: State,
        reason: Reason,
        for_: Option<Duration>,
        recording: bool,
        now: u64,
    ) {
        let until = for_.map_or(NEVER, |d| now.saturating_add(nanos(d)));
        let mut rare = lock(&self.rare);
        let cur = self.word();
        // Stored before the word moves, so a caller that sees the new state sees its flag.
        self.until.store(encode(until, recording), Release);
        let event = self.switch(&mut rare, cur, to, reason, now);
        drop(rare);
        self.events.emit(event);
    }

    /// Ends a forced state whose time is up: forced open goes to half-open (trials decide, so a
    /// dependency still down is not hit by all traffic), forced closed to closed. Checked lazily
    /// on admission and by the metrics, so no timer task is needed. True if it moved.
    pub(crate) fn expire_force(&self, w: Word, now: u64) -> bool {
        let to = match w.state() {
            State::ForcedOpen => State::HalfOpen,
            State::ForcedClosed => State::Closed,
            _ => return false,
        };
        if now < self.force_until() {
            return false;
        }
        self.transition(Some(w), to, Reason::ForceExpired, now);
        true
    }

    /// Whether calls go into the window now: always, except forced closed without recording.
    pub(crate) fn recording(&self) -> bool {
        self.state() != State::ForcedClosed || self.records_forced()
    }

    /// While forced: whether calls are recorded (`force_close`, resilience4j's METRICS_ONLY)
    /// or not (`force_close_unrecorded`, its DISABLED).
    pub(crate) fn records_forced(&self) -> bool {
        self.until.load(Acquire) & UNRECORDED == 0
    }

    /// The forced state's lapse, without the recording flag.
    pub(super) fn force_until(&self) -> u64 {
        decode(self.until.load(Acquire))
    }

    /// Time left of a forced state that lapses, if the breaker is in one.
    pub(crate) fn force_expires_in(&self, now: u64) -> Option<Duration> {
        if !matches!(self.state(), State::ForcedOpen | State::ForcedClosed) {
            return None;
        }
        let until = self.force_until();
        (until != NEVER).then(|| Duration::from_nanos(until.saturating_sub(now)))
    }
}
