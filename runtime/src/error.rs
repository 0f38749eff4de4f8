//! What a rejected or failed call returns: [`Rejection`], [`Error`], and (re-exported from
//! `fusebox-settings`) [`ConfigError`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::state::State;

/// Why fusebox refused (or cut short) a call without the dependency answering.
///
/// Each variant carries the name of the breaker or bulkhead that refused.
///
/// ```
/// use fusebox_runtime::Rejection;
/// fn is_retryable(r: &Rejection) -> bool {
///     matches!(r, Rejection::TimedOut { .. })
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rejection {
    /// The breaker is open, forced open, or half-open and did not admit this call.
    Open {
        /// Registry name of the breaker (with `/key` for keyed breakers).
        name: Arc<str>,
        /// The state that refused: `Open`, `ForcedOpen` or `HalfOpen`.
        state: State,
        /// When the breaker will next try the dependency, if it knows.
        retry_in: Option<Duration>,
    },
    /// The bulkhead's pool was full (and stayed full for `max_wait`).
    Full {
        /// Registry name of the bulkhead.
        name: Arc<str>,
        /// Its pool size.
        pool: usize,
    },
    /// The call ran longer than its timeout and was cancelled. Counted as a failure.
    TimedOut {
        /// Registry name of the breaker.
        name: Arc<str>,
        /// The timeout that elapsed.
        after: Duration,
    },
}

impl Rejection {
    /// Name of the breaker or bulkhead that refused the call.
    pub fn name(&self) -> &str {
        match self {
            Rejection::Open { name, .. }
            | Rejection::Full { name, .. }
            | Rejection::TimedOut { name, .. } => name,
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::Open {
                name,
                state,
                retry_in,
            } => {
                if *state == State::Closed {
                    // Only a ramp refuses while closed (`ramp`, issue 22).
                    return write!(
                        f,
                        "circuit breaker `{name}` is closed, ramping traffic back in: this call is outside the share admitted now"
                    );
                }
                write!(f, "circuit breaker `{name}` is {state}")?;
                if let Some(d) = retry_in {
                    write!(f, " (retrying in {d:?})")?;
                }
                Ok(())
            }
            Rejection::Full { name, pool } => {
                write!(f, "bulkhead `{name}` is full ({pool} calls in flight)")
            }
            Rejection::TimedOut { name, after } => {
                write!(f, "call through `{name}` timed out after {after:?}")
            }
        }
    }
}

impl std::error::Error for Rejection {}

/// What a fallback receives: the call was rejected, or it failed with the function's own error.
///
/// ```
/// use fusebox_runtime::{Error, Rejection};
/// fn describe(e: &Error<std::io::Error>) -> &'static str {
///     match e {
///         Error::Rejected(Rejection::Open { .. }) => "breaker open",
///         Error::Rejected(_) => "rejected",
///         Error::Failed(_) => "dependency failed",
///     }
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error<E> {
    /// fusebox refused or cut short the call.
    Rejected(Rejection),
    /// The call ran and returned an error that counts as a failure.
    Failed(E),
}

impl<E> Error<E> {
    /// The rejection, if this is one.
    pub fn rejection(&self) -> Option<&Rejection> {
        match self {
            Error::Rejected(r) => Some(r),
            Error::Failed(_) => None,
        }
    }

    /// Turns the error back into the function's own error type.
    ///
    /// ```
    /// # use fusebox_runtime::{Error, Rejection};
    /// #[derive(Debug)]
    /// enum MyErr { Io, Unavailable(Rejection) }
    /// impl From<Rejection> for MyErr { fn from(r: Rejection) -> Self { MyErr::Unavailable(r) } }
    /// let e: Error<MyErr> = Error::Failed(MyErr::Io);
    /// assert!(matches!(e.into_inner(), MyErr::Io));
    /// ```
    pub fn into_inner(self) -> E
    where
        E: From<Rejection>,
    {
        match self {
            Error::Rejected(r) => E::from(r),
            Error::Failed(e) => e,
        }
    }
}

impl<E> From<Rejection> for Error<E> {
    fn from(r: Rejection) -> Self {
        Error::Rejected(r)
    }
}

impl<E: fmt::Display> fmt::Display for Error<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Rejected(r) => write!(f, "rejected: {r}"),
            Error::Failed(e) => write!(f, "failed: {e}"),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for Error<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Rejected(r) => Some(r),
            Error::Failed(e) => Some(e),
        }
    }
}

/// An invalid setting: the error of `fusebox-settings`, the one table of keys, ranges and
/// messages that `#[breaker]` also shows at compile time. The builders return it instead of
/// panicking.
///
/// ```
/// use fusebox_runtime::{Breaker, ConfigError};
/// let err = Breaker::builder("x").failure_rate(0).config().unwrap_err();
/// assert!(matches!(err, ConfigError::OutOfRange { field: "failure_rate", .. }));
/// ```
pub use fusebox_settings::ConfigError;
