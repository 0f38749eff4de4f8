//! The stuck alert: a breaker away from closed (or held forced) longer than `alert_after` logs
//! one ERROR per episode and shows `stuck` in every metrics output.

use std::time::Duration;

use super::core::{Core, LOGGED, NEVER};
use crate::clock::nanos;
use crate::state::State;
use crate::sync::atomic::Ordering::*;

impl Core {
    /// How long the breaker has been away from closed, if it is.
    pub(crate) fn unhealthy_for(&self, now: u64) -> Option<Duration> {
        let since = self.unhealthy_since.load(Relaxed);
        (since != NEVER).then(|| Duration::from_nanos(now.saturating_sub(since & !LOGGED)))
    }

    /// True when away from closed longer than `alert_after`; logs at ERROR once per episode.
    pub(crate) fn check_stuck(&self, now: u64) -> bool {
        // Every refusal asks: compare raw nanoseconds first, build durations only when stuck.
        let since = self.unhealthy_since.load(Relaxed);
        if since == NEVER
            || now.saturating_sub(since & !LOGGED) < nanos(self.config().alert_after())
        {
            return false;
        }
        let for_ = self.unhealthy_for(now).unwrap_or_default();
        if since & LOGGED == 0 && self.unhealthy_since.fetch_or(LOGGED, Relaxed) & LOGGED == 0 {
            let state = self.state();
            if matches!(state, State::ForcedOpen | State::ForcedClosed) {
                tracing::error!(
                    breaker = %self.config.name,
                    %state,
                    forced_for = ?for_,
                    alert_after = ?self.config().alert_after(),
                    "circuit breaker stuck: held in a forced state longer than alert_after"
                );
            } else {
                tracing::error!(
                    breaker = %self.config.name,
                    %state,
                    unhealthy_for = ?for_,
                    alert_after = ?self.config().alert_after(),
                    "circuit breaker stuck: away from closed longer than alert_after"
                );
            }
        }
        true
    }
}
