//! Which results of the inner service count as failures of the dependency.

use crate::breaker::Outcome;

/// Decides whether a finished call counts as a failure in the breaker's window.
///
/// Implemented by [`ErrorsFail`] (the default: every `Err`) and by any
/// `Fn(&Result<T, E>) -> bool`, so a response can fail too: a `5xx` is the dependency failing,
/// a `4xx` is the dependency answering. The result goes back to the caller either way; this only
/// decides what the breaker learns from it.
///
/// ```
/// use fusebox::tower::{Classify, ErrorsFail};
///
/// let server_errors = |res: &Result<u16, std::io::Error>| match res {
///     Ok(status) => *status >= 500,
///     Err(_) => true,
/// };
/// assert!(server_errors.is_failure(&Ok(503)));
/// assert!(!server_errors.is_failure(&Ok(404)));
/// assert!(Classify::<u16, &str>::is_failure(&ErrorsFail, &Err("down")));
/// ```
pub trait Classify<T, E> {
    /// True when `result` is a failure of the dependency (examples above).
    fn is_failure(&self, result: &Result<T, E>) -> bool;

    /// The three-way outcome the breaker records: by default a failure when
    /// [`is_failure`](Self::is_failure) says so and a success otherwise. [`Classified`]
    /// overrides it so that a result can be ignored (no place in the window, not a trial).
    ///
    /// ```
    /// use fusebox::tower::{Classify, ErrorsFail};
    /// use fusebox::call::Outcome;
    /// assert_eq!(Classify::<u16, ()>::outcome(&ErrorsFail, &Err(())), Outcome::Failure);
    /// ```
    fn outcome(&self, result: &Result<T, E>) -> Outcome {
        if self.is_failure(result) {
            Outcome::Failure
        } else {
            Outcome::Success
        }
    }
}

/// A classifier that returns the three outcomes: `Classified(|res| ...)` given to
/// [`BreakerLayer::failure`](crate::tower::BreakerLayer::failure), so that, say, a request
/// the dependency never saw is [`Outcome::Ignored`].
///
/// ```
/// use fusebox::tower::{Classified, Classify};
/// use fusebox::call::Outcome;
///
/// let c = Classified(|res: &Result<u16, &str>| match res {
///     Ok(s) if *s >= 500 => Outcome::Failure,
///     Ok(_) => Outcome::Success,
///     Err(_) => Outcome::Ignored,
/// });
/// assert_eq!(c.outcome(&Err("rejected by the client")), Outcome::Ignored);
/// assert!(c.is_failure(&Ok(503)));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Classified<F>(pub F);

impl<T, E, F> Classify<T, E> for Classified<F>
where
    F: Fn(&Result<T, E>) -> Outcome,
{
    #[inline]
    fn is_failure(&self, result: &Result<T, E>) -> bool {
        (self.0)(result) == Outcome::Failure
    }

    #[inline]
    fn outcome(&self, result: &Result<T, E>) -> Outcome {
        (self.0)(result)
    }
}

/// The default classification: every `Err` is a failure, every `Ok` a success.
///
/// ```
/// use fusebox::tower::{Classify, ErrorsFail};
/// assert!(!Classify::<u16, ()>::is_failure(&ErrorsFail, &Ok(500)));
/// assert!(Classify::<u16, ()>::is_failure(&ErrorsFail, &Err(())));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ErrorsFail;

impl<T, E> Classify<T, E> for ErrorsFail {
    #[inline]
    fn is_failure(&self, result: &Result<T, E>) -> bool {
        result.is_err()
    }
}

impl<T, E, F> Classify<T, E> for F
where
    F: Fn(&Result<T, E>) -> bool,
{
    #[inline]
    fn is_failure(&self, result: &Result<T, E>) -> bool {
        self(result)
    }
}
