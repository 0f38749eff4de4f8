//! What one state change is ([`Transition`], [`Reason`]) and the level it is logged at.

use std::fmt;
use std::sync::Arc;

use tokio::time::Instant;

use crate::state::State;

/// Why a breaker changed state.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Reason {
    /// The window's failure rate reached the threshold.
    FailureRate {
        /// Failed share of the window, in percent.
        rate: f64,
        /// The configured threshold, in percent.
        threshold: u8,
        /// Calls in the window.
        calls: u64,
    },
    /// The window's slow-call rate reached the threshold.
    SlowRate {
        /// Slow share of the window, in percent.
        rate: f64,
        /// The configured threshold, in percent.
        threshold: u8,
        /// Calls in the window.
        calls: u64,
    },
    /// The open period ended.
    OpenElapsed,
    /// The half-open trials passed.
    TrialsPassed {
        /// Trials that succeeded.
        ok: u32,
        /// Trials that failed.
        failed: u32,
    },
    /// A probe let through while open (`probe_every`) passed: half-open starts early.
    ProbePassed,
    /// The half-open trials failed.
    TrialsFailed {
        /// Trials that succeeded.
        ok: u32,
        /// Trials that failed.
        failed: u32,
    },
    /// An operator forced the state.
    Forced,
    /// An operator reset the breaker.
    Reset,
    /// Enough of the fleet's live instances report this breaker open (feature `redis`,
    /// quorum opening): this closed one opens too, then probes on its own schedule.
    Quorum {
        /// Live instances that report it open on their own judgement.
        open: u32,
        /// Live instances that have this breaker, this one included.
        live: u32,
        /// The configured share, in percent.
        threshold: u8,
    },
    /// A forced state given a duration (`force_open_for`, `force_close_for`) ran out.
    ForceExpired,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::FailureRate {
                rate,
                threshold,
                calls,
            } => write!(
                f,
                "failure rate {rate:.1}% >= {threshold}% over {calls} calls"
            ),
            Reason::SlowRate {
                rate,
                threshold,
                calls,
            } => write!(
                f,
                "slow-call rate {rate:.1}% over {threshold}% over {calls} calls"
            ),
            Reason::OpenElapsed => f.write_str("open period elapsed"),
            Reason::ProbePassed => f.write_str("a probe passed"),
            Reason::TrialsPassed { ok, failed } => {
                write!(f, "trials passed ({ok} ok, {failed} failed)")
            }
            // With no trial failed, only slowness reopens: say so, not "0 failed".
            Reason::TrialsFailed { ok, failed: 0 } => {
                write!(f, "trials too slow ({ok} ok in time, 0 failed)")
            }
            Reason::TrialsFailed { ok, failed } => {
                write!(f, "trials failed ({ok} ok, {failed} failed)")
            }
            Reason::Forced => f.write_str("forced by an operator"),
            Reason::Reset => f.write_str("reset by an operator"),
            Reason::Quorum {
                open,
                live,
                threshold,
            } => write!(
                f,
                "fleet quorum: {open} of {live} live instances open (>= {threshold}%)"
            ),
            Reason::ForceExpired => f.write_str("forced state expired"),
        }
    }
}

/// One state change of one breaker.
///
/// ```no_run
/// # async fn page(_: &str) {}
/// # async fn demo() {
/// let mut rx = fusebox::registry().subscribe();
/// while let Ok(t) = rx.recv().await {
///     if t.to == fusebox::State::Open {
///         page(&format!("{} opened: {}", t.name, t.reason)).await;
///     }
/// }
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Transition {
    /// Registry name of the breaker.
    pub name: Arc<str>,
    /// State before.
    pub from: State,
    /// State after.
    pub to: State,
    /// When it happened (virtual time under a paused clock).
    pub at: Instant,
    /// Why.
    pub reason: Reason,
}

/// Logs `t` at the level its seriousness deserves.
pub(super) fn log(t: &Transition) {
    // tracing fixes a line's level where it is written: one call per level, the fields once.
    macro_rules! line {
        ($level:ident, $message:literal) => {
            tracing::$level!(
                breaker = %t.name, from = %t.from, to = %t.to, reason = %t.reason,
                $message
            )
        };
    }
    match t.to {
        State::Open => line!(warn, "circuit breaker opened"),
        State::ForcedOpen => line!(warn, "circuit breaker forced open"),
        State::HalfOpen => line!(info, "circuit breaker half-open, sending trial calls"),
        // Nothing protects the dependency while forced closed: worth a WARN, not an INFO.
        State::ForcedClosed => line!(
            warn,
            "circuit breaker forced closed: every call goes through, nothing trips"
        ),
        State::Closed => line!(info, "circuit breaker closed"),
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::Reason;

    #[test]
    fn trials_that_reopen_on_slowness_alone_are_called_slow_not_failed() {
        let slow = Reason::TrialsFailed { ok: 0, failed: 0 };
        assert_eq!(slow.to_string(), "trials too slow (0 ok in time, 0 failed)");
        let failed = Reason::TrialsFailed { ok: 3, failed: 2 };
        assert_eq!(failed.to_string(), "trials failed (3 ok, 2 failed)");
    }
}
