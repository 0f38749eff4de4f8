//! Why joining the fleet or sending it an override failed.

use std::fmt;

/// What [`join`](super::join) or an override refused, as a value: nothing in fleet mode panics.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use fusebox_runtime::fleet::{join, FleetConfig, FleetError};
/// let bad = join(FleetConfig::new("redis://127.0.0.1/", "", "pod-1")).await;
/// assert!(matches!(bad.err(), Some(FleetError::BadName { field: "service", .. })));
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FleetError {
    /// The Redis URL does not parse (or asks for something this build cannot do).
    BadUrl {
        /// The client's own message.
        reason: String,
    },
    /// The service name, the instance id or a breaker name is unusable.
    BadName {
        /// `"service"`, `"instance"` or `"breaker"`.
        field: &'static str,
        /// Why.
        reason: &'static str,
    },
    /// A quorum rule that could not work as written.
    BadQuorum {
        /// The breaker it names.
        breaker: String,
        /// Why.
        reason: &'static str,
    },
    /// A heartbeat, TTL, wait or override duration out of range.
    BadDuration {
        /// Which duration.
        field: &'static str,
        /// What is accepted.
        expected: &'static str,
    },
    /// `join` ran outside a tokio runtime: the fleet task needs one.
    NoRuntime,
    /// This process is already in a fleet: one background task per process.
    AlreadyJoined,
    /// The link to Redis is down, so the override was not sent.
    LinkDown,
    /// Redis answered an error or did not answer in time.
    Redis {
        /// The client's message.
        reason: String,
    },
}

impl fmt::Display for FleetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FleetError::BadUrl { reason } => write!(f, "bad Redis URL: {reason}"),
            FleetError::BadName { field, reason } => write!(f, "bad {field} name: {reason}"),
            FleetError::BadQuorum { breaker, reason } => {
                write!(f, "bad quorum rule for `{breaker}`: {reason}")
            }
            FleetError::BadDuration { field, expected } => {
                write!(f, "bad {field}: expected {expected}")
            }
            FleetError::NoRuntime => f.write_str("fleet::join needs a tokio runtime"),
            FleetError::AlreadyJoined => f.write_str("this process has already joined a fleet"),
            FleetError::LinkDown => f.write_str("the fleet link to Redis is down"),
            FleetError::Redis { reason } => write!(f, "Redis: {reason}"),
        }
    }
}

impl std::error::Error for FleetError {}
