//! The attempt loop: one attempt, then the verdict (return, or wait and try again).

use std::future::Future;
use std::time::Duration;

use tokio::time::{sleep, Instant};

use super::policy::Retry;
use crate::error::{Error, Rejection};

/// What to do after a failed attempt.
enum Next {
    /// Return this error to the caller.
    Stop,
    /// Try again, waiting at least this long (the dependency's own hint).
    Again(Option<Duration>),
}

impl Retry {
    /// Runs `attempt` until it succeeds or the policy says stop, retrying every counted
    /// failure (`Error::Failed`); see [the module](super) for what is never retried.
    ///
    /// Each call of `attempt` must make a fresh attempt, through the breaker (and bulkhead),
    /// e.g. `|| breaker.call(client.get(..))`. Dropping the returned future stops retrying.
    pub async fn run<T, E, F, Fut>(&self, attempt: F) -> Result<T, Error<E>>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Error<E>>>,
    {
        self.run_with(attempt, |_: &E| true, |_: &E| None).await
    }

    /// [`run`](Self::run), retrying only failures that `retry_on` accepts, and waiting at least
    /// what `retry_after` reads from an error (HTTP `Retry-After`, gRPC's
    /// `grpc-retry-pushback-ms`) before the next attempt.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox_runtime::retry::Retry;
    /// use fusebox_runtime::Error;
    ///
    /// #[derive(Debug, PartialEq)]
    /// enum HttpError { Status(u16, Option<Duration>) }
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let retry = Retry::builder("retry-doc-http").build().unwrap();
    /// let started = tokio::time::Instant::now();
    /// let mut n = 0;
    /// let r: Result<&str, Error<HttpError>> = retry
    ///     .run_with(
    ///         || {
    ///             n += 1;
    ///             let first = n == 1;
    ///             async move {
    ///                 if first {
    ///                     Err(Error::Failed(HttpError::Status(503, Some(Duration::from_secs(1)))))
    ///                 } else {
    ///                     Ok("ok")
    ///                 }
    ///             }
    ///         },
    ///         |HttpError::Status(code, _)| *code >= 500,
    ///         |HttpError::Status(_, after)| *after,
    ///     )
    ///     .await;
    /// assert_eq!(r, Ok("ok"));
    /// assert!(started.elapsed() >= Duration::from_secs(1), "waited as the server asked");
    /// # }
    /// ```
    pub async fn run_with<T, E, F, Fut, R, A>(
        &self,
        mut attempt: F,
        retry_on: R,
        retry_after: A,
    ) -> Result<T, Error<E>>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Error<E>>>,
        R: Fn(&E) -> bool,
        A: Fn(&E) -> Option<Duration>,
    {
        self.budget.deposit();
        // The clock is read only for a deadline: a first success without one pays for nothing
        // but the deposit.
        let started = self.total.map(|_| Instant::now());
        let first = attempt().await;
        let Err(mut err) = first else {
            return first;
        };
        let mut retries = 0;
        loop {
            let hint = match self.next(&err, &retry_on, &retry_after) {
                Next::Stop => return Err(err),
                Next::Again(hint) => hint,
            };
            if retries + 1 >= self.attempts {
                return Err(err);
            }
            let wait = self.backoff.delay(retries).max(hint.unwrap_or_default());
            if !self.fits(started, wait) || !self.budget.try_withdraw() {
                return Err(err);
            }
            sleep(wait).await;
            retries += 1;
            match attempt().await {
                Ok(v) => return Ok(v),
                Err(e) => err = e,
            }
        }
    }

    /// The verdict on one failed attempt.
    fn next<E>(
        &self,
        err: &Error<E>,
        retry_on: impl Fn(&E) -> bool,
        retry_after: impl Fn(&E) -> Option<Duration>,
    ) -> Next {
        match err {
            Error::Failed(e) if retry_on(e) => Next::Again(retry_after(e)),
            Error::Rejected(Rejection::TimedOut { .. }) if self.idempotent => Next::Again(None),
            // Refusals, timeouts of calls that may have gone through, failures not retried.
            _ => Next::Stop,
        }
    }

    /// Whether an attempt after `wait` could finish before the deadline.
    fn fits(&self, started: Option<Instant>, wait: Duration) -> bool {
        let (Some(total), Some(started)) = (self.total, started) else {
            return true;
        };
        let ends = started.elapsed() + wait + self.attempt_timeout.unwrap_or_default();
        match self.attempt_timeout {
            Some(_) => ends <= total,
            None => ends < total,
        }
    }
}
