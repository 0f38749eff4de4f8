//! Forced states: an operator's override, held until changed or for a given time. A forced
//! state that lapses is ended lazily, on admission and by the metrics, so no timer task runs.
//!
//! Invariants:
//! - [`Forced::expires`] is written under the lock before the word turns to the forced state,
//!   so an admitter that sees the state reads its lapse. One holding a stale forced word after
//!   a newer force reads the newer lapse: at worst one call is judged by it.
//! - Whether a forced-closed breaker records its calls is the word's own code
//!   (`Word::unrecorded`), read with the state, so it can never disagree with it.

use std::time::Duration;

use super::core::{Core, NEVER};
use super::events::Reason;
use crate::clock::coarse;
use crate::clock::nanos;
use crate::error::Rejection;
use crate::state::{State, Word};
use crate::sync::atomic::{AtomicU64, Ordering::*};
use crate::sync::lock;

/// The current (or last) forced state's lapse.
pub(crate) struct Forced {
    /// When the forced state lapses (virtual nanos); [`NEVER`]: held until changed.
    expires: AtomicU64,
}

impl Default for Forced {
    fn default() -> Forced {
        Forced {
            expires: AtomicU64::new(NEVER),
        }
    }
}

impl Forced {
    /// When the forced state lapses, [`NEVER`] if it is held until changed.
    pub(crate) fn expires(&self) -> u64 {
        self.expires.load(Acquire)
    }

    /// Held until changed: no deadline to compare the clock with.
    pub(super) fn held(&self) -> bool {
        self.expires() == NEVER
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
        let expires = for_.map_or(NEVER, |d| now.saturating_add(nanos(d)));
        let mut rare = lock(&self.rare);
        let cur = self.word();
        self.forced.expires.store(expires, Release);
        let next = self.enter(&mut rare, cur, to, &reason, now);
        let next = if recording {
            next
        } else {
            next.without_recording()
        };
        let event = self.publish(cur, next, reason, now);
        drop(rare);
        self.events.emit(event);
    }

    /// Ends a forced state whose time is up: forced open goes to half-open (trials decide, so a
    /// dependency still down is not hit by all traffic), forced closed to closed. Checked lazily
    /// on admission and by the metrics, so no timer task is needed. True if it moved.
    pub(crate) fn expire_force(&self, w: Word, now: u64) -> bool {
        let Some(to) = self.force_lapsed(w, now) else {
            return false;
        };
        self.transition(Some(w), to, Reason::ForceExpired, now);
        true
    }

    /// What the forced word `w` lapses into if its time ran out by `now`: forced open into
    /// half-open (trials find out), forced closed into closed; `None` otherwise.
    pub(crate) fn force_lapsed(&self, w: Word, now: u64) -> Option<State> {
        let to = match w.state() {
            State::ForcedOpen => State::HalfOpen,
            State::ForcedClosed => State::Closed,
            _ => return None,
        };
        (now >= self.forced.expires()).then_some(to)
    }

    /// Whether calls go into the window now: always, except forced closed without recording.
    pub(crate) fn recording(&self) -> bool {
        !self.word().unrecorded()
    }

    /// Time left of a forced state that lapses, if the breaker is in one.
    pub(crate) fn force_expires_in(&self, now: u64) -> Option<Duration> {
        if !matches!(self.state(), State::ForcedOpen | State::ForcedClosed) {
            return None;
        }
        let expires = self.forced.expires();
        (expires != NEVER).then(|| Duration::from_nanos(expires.saturating_sub(now)))
    }

    /// The refusal of a breaker forced open until changed (`force_open`, an operator's switch),
    /// the common case written out for `call.rs` as the open one is (`refuse_while_open`): the
    /// word was plain `ForcedOpen` (no live settings) and the force is held. Once reported
    /// stuck there is nothing to compare the clock with; before, a coarse reading
    /// (`clock/coarse.rs`) that surely lies before the stuck alert is due settles it. `None`:
    /// anything else (the alert due, no coarse clock), which the general path decides.
    ///
    /// A force that lapses (`force_open_for`) always takes the general path, on the exact
    /// clock: a test that pauses its clock mid-way and advances it past the lapse must be let
    /// in at once, and a coarse reading taken before the coarse clock noticed the pause (within
    /// one of its ticks, `clock/coarse.rs`) would still be before the lapse.
    #[inline(always)]
    pub(crate) fn refuse_while_forced_open(&self) -> Option<Rejection> {
        if !self.forced.held() {
            return None;
        }
        if self.stuck.alerted() {
            return Some(self.rejection(State::ForcedOpen, None));
        }
        let at = coarse::now()?;
        let alert_after = nanos(self.code_config().settings().alert_after());
        if self.stuck.unhealthy_nanos(at.latest) >= Some(alert_after) {
            return None;
        }
        Some(self.rejection(State::ForcedOpen, None))
    }
}
