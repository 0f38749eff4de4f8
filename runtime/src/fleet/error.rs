//! Why joining the fleet or sending it an override failed.

use std::fmt;
use std::time::Duration;

use super::LinkState;

/// What [`join`](super::join) or an override refused, as a value: nothing in fleet mode panics.
///
/// A send ([`Fleet::send`](super::Fleet::send), `force_open`, `force_close`, `reset`, the admin
/// router's `?scope=fleet`) fails in one of two ways: its arguments were refused
/// ([`BadName`](FleetError::BadName), [`BadDuration`](FleetError::BadDuration)), or the fleet
/// could not be reached, which is always [`LinkDown`](FleetError::LinkDown), from the first
/// send of an outage on, whatever the cause ([`LinkFault`] says which, for logs).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use fusebox::fleet::{join, FleetConfig, FleetError};
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
    /// The fleet is unreachable, so the override was not sent: the one error of a send that
    /// could not reach Redis, whatever the cause (see [`LinkFault`]), from the first send of
    /// an outage on. Nothing was written; send it again once the link is up.
    ///
    /// ```
    /// # async fn demo(fleet: fusebox::fleet::Fleet) {
    /// use std::time::Duration;
    /// use fusebox::fleet::FleetError;
    /// match fleet.force_open("payments", Duration::from_secs(600), "alice").await {
    ///     Ok(()) => println!("sent to every instance"),
    ///     Err(FleetError::LinkDown { cause }) => eprintln!("not sent, retry later: {cause}"),
    ///     Err(other) => eprintln!("refused: {other}"),
    /// }
    /// # }
    /// ```
    LinkDown {
        /// What went wrong, for logs: the link not up, a broken connection, no answer in
        /// time, or an error reply.
        cause: LinkFault,
    },
    /// Not returned by a send since every failure to reach Redis became
    /// [`LinkDown`](FleetError::LinkDown); kept so code that names it still builds.
    Redis {
        /// The client's message.
        reason: String,
    },
    /// A fleet-wide settings change the settings table refuses (issue 29): nothing was sent.
    BadSettings {
        /// The breaker or bulkhead.
        name: String,
        /// The table's reason, in its words: the key and the value for a value out of range,
        /// an unknown key or a rule between keys; a bad duration names the text given (the
        /// admin router's 400 names the pair at fault).
        error: fusebox_settings::ConfigError,
    },
}

/// Why a send could not reach the fleet, inside [`FleetError::LinkDown`]. Match `LinkDown { .. }`
/// to handle every one; this tells them apart for logs and retries.
///
/// ```
/// use std::time::Duration;
/// use fusebox::fleet::{FleetError, LinkFault};
/// let e = FleetError::LinkDown { cause: LinkFault::TimedOut { after: Duration::from_millis(500) } };
/// assert_eq!(e.to_string(), "the fleet is unreachable: Redis did not answer within 500ms");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinkFault {
    /// The link was not up when the send began: still [`Connecting`](LinkState::Connecting)
    /// (no exchange with Redis has succeeded yet) or [`Down`](LinkState::Down) (the last one
    /// failed; `last_error` says how: connection refused, timed out...).
    NotUp {
        /// The link's state.
        state: LinkState,
        /// The fleet task's last error, if one ended an exchange.
        last_error: Option<String>,
    },
    /// The connection broke under the send: reset, broken pipe, closed (Redis killed or
    /// restarted before the fleet task noticed).
    Broken {
        /// The client's message.
        reason: String,
    },
    /// Redis did not answer within the bound on one exchange (half a heartbeat, at most 1 s):
    /// frozen, partitioned or overloaded.
    TimedOut {
        /// How long the send waited.
        after: Duration,
    },
    /// Redis answered with an error (`READONLY` after a failover, `LOADING` after a restart,
    /// `OOM`...): it cannot take the override now. The fleet task marks the link down on the
    /// same errors.
    ErrorReply {
        /// Redis's message.
        reason: String,
    },
}

impl LinkFault {
    /// Sorts a client error: a timeout, a broken connection (any I/O error) or an error reply.
    pub(crate) fn of(e: &redis::RedisError, after: Duration) -> LinkFault {
        if e.is_timeout() {
            LinkFault::TimedOut { after }
        } else if e.is_io_error() || e.is_connection_dropped() {
            LinkFault::Broken {
                reason: e.to_string(),
            }
        } else {
            LinkFault::ErrorReply {
                reason: e.to_string(),
            }
        }
    }
}

impl fmt::Display for LinkFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkFault::NotUp {
                state,
                last_error: Some(e),
            } => write!(f, "the link to Redis is {} ({e})", state.as_str()),
            LinkFault::NotUp { state, .. } => {
                write!(f, "the link to Redis is {}", state.as_str())
            }
            LinkFault::Broken { reason } => write!(f, "the connection to Redis broke ({reason})"),
            LinkFault::TimedOut { after } => write!(f, "Redis did not answer within {after:?}"),
            LinkFault::ErrorReply { reason } => write!(f, "Redis refused the write ({reason})"),
        }
    }
}

impl std::error::Error for LinkFault {}

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
            // The cause is in the message (logs usually print `{e}` alone), not in `source()`,
            // so an error-chain printer does not say it twice.
            FleetError::LinkDown { cause } => write!(f, "the fleet is unreachable: {cause}"),
            FleetError::Redis { reason } => write!(f, "Redis: {reason}"),
            FleetError::BadSettings { name, error } => {
                write!(f, "bad settings for `{name}`: {error}")
            }
        }
    }
}

impl std::error::Error for FleetError {}

#[cfg(test)]
mod tests {
    use super::*;
    use redis::{ErrorKind, RedisError};
    use std::io;

    #[test]
    fn every_client_error_is_a_fault_of_the_link() {
        let t = Duration::from_millis(500);
        let io = |k: io::ErrorKind| RedisError::from(io::Error::from(k));
        for k in [
            io::ErrorKind::BrokenPipe,
            io::ErrorKind::ConnectionReset,
            io::ErrorKind::UnexpectedEof,
            io::ErrorKind::ConnectionRefused,
        ] {
            assert!(
                matches!(LinkFault::of(&io(k), t), LinkFault::Broken { .. }),
                "{k:?}"
            );
        }
        assert_eq!(
            LinkFault::of(&io(io::ErrorKind::TimedOut), t),
            LinkFault::TimedOut { after: t }
        );
        let reply = RedisError::from((ErrorKind::ReadOnly, "READONLY", "a replica".to_owned()));
        let fault = LinkFault::of(&reply, t);
        assert!(matches!(fault, LinkFault::ErrorReply { .. }), "{fault:?}");
        let e = FleetError::LinkDown { cause: fault };
        assert!(
            e.to_string()
                .starts_with("the fleet is unreachable: Redis refused the write"),
            "{e}"
        );
    }

    #[test]
    fn a_link_not_up_says_its_state_and_last_error() {
        let e = FleetError::LinkDown {
            cause: LinkFault::NotUp {
                state: LinkState::Down,
                last_error: Some("Connection refused (os error 111)".into()),
            },
        };
        assert_eq!(
            e.to_string(),
            "the fleet is unreachable: the link to Redis is down (Connection refused (os error 111))"
        );
        let connecting = LinkFault::NotUp {
            state: LinkState::Connecting,
            last_error: None,
        };
        assert_eq!(connecting.to_string(), "the link to Redis is connecting");
    }
}
