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
/// use fusebox::Rejection;
/// fn is_retryable(r: &Rejection) -> bool {
///     matches!(r, Rejection::TimedOut { .. })
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rejection {
    /// The breaker did not admit this call: it is open, forced open, half-open past its trial
    /// share, or closed and ramping traffic back in past the share admitted now (`ramp`).
    ///
    /// Match a ramp refusal as what it is with `state: State::Closed`
    /// ([`Rejection::is_ramp`]); it is an `Open` refusal for every other purpose
    /// ([`Rejection::is_open`]), so code that falls back on `Open { .. }` keeps working.
    ///
    /// ```
    /// use fusebox::{Rejection, State};
    /// fn why(r: &Rejection) -> &'static str {
    ///     match r {
    ///         Rejection::Open { state: State::Closed, .. } => "ramping back in",
    ///         Rejection::Open { state: State::HalfOpen, .. } => "not a trial call",
    ///         Rejection::Open { .. } => "open",
    ///         _ => "other",
    ///     }
    /// }
    /// let ramp = Rejection::Open { name: "p".into(), state: State::Closed, retry_in: None };
    /// assert_eq!(why(&ramp), "ramping back in");
    /// assert!(ramp.is_open() && ramp.is_ramp());
    /// ```
    Open {
        /// Registry name of the breaker (with `/key` for keyed breakers).
        name: Arc<str>,
        /// The state that refused: `Open`, `ForcedOpen` or `HalfOpen`; `Closed` when a ramp
        /// refused (the breaker closed, admitting a growing share of calls).
        state: State,
        /// When the breaker will next let calls try the dependency, if it knows: the end of
        /// the open period (what a `Retry-After` should say). With `probe_every`, single
        /// probes go through before it, one caller each, so a retry then is still refused.
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
    /// True for every refusal by a breaker ([`Rejection::Open`]), ramp refusals included.
    pub fn is_open(&self) -> bool {
        matches!(self, Rejection::Open { .. })
    }

    /// True for a refusal by a ramp: the breaker is closed and admits a growing share of calls.
    pub fn is_ramp(&self) -> bool {
        matches!(
            self,
            Rejection::Open {
                state: State::Closed,
                ..
            }
        )
    }

    /// True when a full bulkhead refused ([`Rejection::Full`]).
    pub fn is_full(&self) -> bool {
        matches!(self, Rejection::Full { .. })
    }

    /// True when the call was cut short by its timeout ([`Rejection::TimedOut`]).
    pub fn is_timed_out(&self) -> bool {
        matches!(self, Rejection::TimedOut { .. })
    }

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
                    // Only a ramp refuses while closed (`ramp`).
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

/// A rejection as an [`std::io::Error`], so a function returning [`std::io::Result`] needs no
/// fallback (neither type being the user's, only fusebox can write this impl). A timeout is
/// [`ErrorKind::TimedOut`](std::io::ErrorKind::TimedOut), as tokio's `Elapsed` converts; an open
/// breaker or a full bulkhead [`ErrorKind::Other`](std::io::ErrorKind::Other). The rejection is
/// the inner error, with its name and reason.
///
/// ```
/// use std::io;
/// use fusebox::{breaker, registry, Rejection};
///
/// #[breaker(name = "io-doc")]
/// async fn read_config() -> io::Result<String> {
///     Ok("ok".into())
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// registry().breaker("io-doc").unwrap().force_open();
/// let err = read_config().await.unwrap_err();
/// assert_eq!(err.kind(), io::ErrorKind::Other);
/// let r = err.get_ref().and_then(|e| e.downcast_ref::<Rejection>()).unwrap();
/// assert!(r.is_open());
/// # }
/// ```
impl From<Rejection> for std::io::Error {
    fn from(r: Rejection) -> std::io::Error {
        let kind = if r.is_timed_out() {
            std::io::ErrorKind::TimedOut
        } else {
            std::io::ErrorKind::Other
        };
        std::io::Error::new(kind, r)
    }
}

/// What a fallback receives: the call was rejected, or it failed with the function's own error.
///
/// ```
/// use fusebox::{Error, Rejection};
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
    /// # use fusebox::{Error, Rejection};
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
/// use fusebox::Breaker;
/// use fusebox::settings::ConfigError;
/// let err = Breaker::builder("x").failure_rate(0).config().unwrap_err();
/// assert!(matches!(err, ConfigError::OutOfRange { field: "failure_rate", .. }));
/// ```
pub use fusebox_settings::ConfigError;
