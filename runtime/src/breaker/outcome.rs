//! How a caller classifies a finished call: success, failure, or ignored (neither).

/// What a finished call tells the breaker about its dependency.
///
/// | outcome | window | failure rate | `min_calls` | half-open trial | fallback |
/// |---|---|---|---|---|---|
/// | `Success` | one more call | lowers it | fills it | a passed trial | no |
/// | `Failure` | one more failed call | raises it | fills it | a failed trial | for an `Err` |
/// | `Ignored` | no place | unchanged | not filled | not a trial: its slot is given back | no |
///
/// An `Ok` value classified as `Failure` (an HTTP 503 inside `Ok(response)`) is counted as a
/// failure and still returned to the caller as is: the fallback answers only an `Err`. An
/// `Err` classified as `Success` or `Ignored` is returned as is too, without the fallback
/// (`Completion::Ignored`). A call is slow or timed out whatever it is classified as: the
/// timeout is a failure before any classification.
///
/// ```
/// use fusebox::Breaker;
/// use fusebox::call::{Completion, Outcome};
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let b = Breaker::builder("classified").build_detached().unwrap();
/// // A request the client refused never reached the dependency: no sign of anything.
/// let c = b
///     .call_classified(async { Err::<u16, &str>("bad request") }, |r: &Result<u16, &str>| match r {
///         Ok(status) if *status >= 500 => Outcome::Failure,
///         Ok(_) => Outcome::Success,
///         Err(_) => Outcome::Ignored,
///     })
///     .await;
/// assert!(matches!(c, Completion::Ignored("bad request")));
/// assert_eq!(b.metrics().window_calls, 0);
/// assert_eq!(b.metrics().ignored, 1);
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The dependency did its job.
    Success,
    /// The dependency failed: counted against it.
    Failure,
    /// Neither: no place in the window, not a trial, counted only in `ignored`.
    Ignored,
}

impl Outcome {
    /// The classification of the attribute's arguments and of `call_filtered`: `ignore`
    /// first, then `failure` (an error it excludes is a success), then `failure_if_ok`.
    ///
    /// ```
    /// use fusebox::call::Outcome;
    /// let r: Result<u16, u16> = Err(404);
    /// let o = Outcome::of(&r, |e| *e == 400, |e| *e >= 500, |_| false);
    /// assert_eq!(o, Outcome::Success);
    /// assert_eq!(Outcome::of(&Err::<u16, u16>(400), |e| *e == 400, |_| true, |_| false), Outcome::Ignored);
    /// assert_eq!(Outcome::of(&Ok::<u16, u16>(503), |_| false, |_| true, |s| *s >= 500), Outcome::Failure);
    /// ```
    pub fn of<T, E>(
        result: &Result<T, E>,
        ignore: impl FnOnce(&E) -> bool,
        failure: impl FnOnce(&E) -> bool,
        failure_if_ok: impl FnOnce(&T) -> bool,
    ) -> Outcome {
        match result {
            Ok(v) if failure_if_ok(v) => Outcome::Failure,
            Ok(_) => Outcome::Success,
            Err(e) if ignore(e) => Outcome::Ignored,
            Err(e) if failure(e) => Outcome::Failure,
            Err(_) => Outcome::Success,
        }
    }
}
