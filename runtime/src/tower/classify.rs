//! Which results of the inner service count as failures of the dependency.

/// Decides whether a finished call counts as a failure in the breaker's window.
///
/// Implemented by [`ErrorsFail`] (the default: every `Err`) and by any
/// `Fn(&Result<T, E>) -> bool`, so a response can fail too: a `5xx` is the dependency failing,
/// a `4xx` is the dependency answering. The result goes back to the caller either way; this only
/// decides what the breaker learns from it.
///
/// ```
/// use fusebox_runtime::tower::{Classify, ErrorsFail};
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
}

/// The default classification: every `Err` is a failure, every `Ok` a success.
///
/// ```
/// use fusebox_runtime::tower::{Classify, ErrorsFail};
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
