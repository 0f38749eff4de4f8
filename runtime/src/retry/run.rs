//! The attempt loop: one attempt, then the verdict (return, or wait and try again).

use std::future::Future;
use std::time::Duration;

use tokio::time::{sleep, timeout_at, Instant};

use super::budget::RetryBudget;
use super::policy::Retry;
use crate::error::{Error, Rejection};

/// A retry granted by the budget whose attempt has not started yet: refunded if dropped.
struct Unmade<'a> {
    budget: &'a RetryBudget,
    slot: u64,
}

impl Drop for Unmade<'_> {
    fn drop(&mut self) {
        self.budget.refund(self.slot);
    }
}

impl Retry {
    /// Runs `attempt` until it succeeds or the policy says stop, retrying every counted
    /// failure (`Error::Failed`); see [the module](super) for what is never retried.
    ///
    /// Each call of `attempt` must make a fresh attempt, through the breaker (and bulkhead),
    /// e.g. `|| breaker.call(client.get(..))`. Dropping the returned future stops retrying.
    pub fn run<'a, T, E, F, Fut>(
        &'a self,
        attempt: F,
    ) -> impl Future<Output = Result<T, Error<E>>> + use<'a, T, E, F, Fut>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Error<E>>>,
    {
        self.run_with(attempt, |_: &E| true, |_: &E| None)
    }

    /// [`run`](Self::run), retrying only failures that `retry_on` accepts, and waiting at least
    /// what `retry_after` reads from an error (HTTP `Retry-After`, gRPC's
    /// `grpc-retry-pushback-ms`) before the next attempt.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::retry::Retry;
    /// use fusebox::Error;
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
    pub fn run_with<'a, T, E, F, Fut, R, A>(
        &'a self,
        attempt: F,
        retry_on: R,
        retry_after: A,
    ) -> impl Future<Output = Result<T, Error<E>>> + use<'a, T, E, F, Fut, R, A>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Error<E>>>,
        R: Fn(&E) -> bool,
        A: Fn(&E) -> Option<Duration>,
    {
        self.run_hinted(attempt, retry_on, retry_after, |_| false)
    }

    /// [`run_with`](Self::run_with), handing every hint `retry_after` reads from a counted
    /// failure to `on_hint` (whether or not that failure is retried: the dependency said when
    /// to call again either way); `on_hint` returns whether it held the breaker open, which
    /// is counted (`RetryMetrics::held_open`). [`Retry::run_with_breaker`] passes
    /// [`Breaker::hold_open`](crate::Breaker::hold_open).
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::retry::Retry;
    /// use fusebox::Error;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let retry = Retry::builder("retry-doc-hinted").attempts(1).build().unwrap();
    /// let mut told = Vec::new();
    /// let r: Result<(), Error<u16>> = retry
    ///     .run_hinted(
    ///         || async { Err(Error::Failed(503)) },
    ///         |_| true,
    ///         |_| Some(Duration::from_secs(1)),
    ///         |d| { told.push(d); true },
    ///     )
    ///     .await;
    /// assert_eq!(r, Err(Error::Failed(503)));
    /// assert_eq!(told, [Duration::from_secs(1)], "told even when not retried");
    /// assert_eq!(fusebox::metrics().retry("retry-doc-hinted").unwrap().held_open, 1);
    /// # }
    /// ```
    pub fn run_hinted<'a, T, E, F, Fut, R, A, H>(
        &'a self,
        attempt: F,
        retry_on: R,
        retry_after: A,
        on_hint: H,
    ) -> impl Future<Output = Result<T, Error<E>>> + use<'a, T, E, F, Fut, R, A, H>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Error<E>>>,
        R: Fn(&E) -> bool,
        A: Fn(&E) -> Option<Duration>,
        H: FnMut(Duration) -> bool,
    {
        let judge = self.judge(retry_on, retry_after);
        self.run_judged(attempt, judge, on_hint, |_| false)
    }

    /// A retry of a fallible future that no breaker or bulkhead guards: every `Err` that
    /// `retry_on` accepts is retried, and the error comes back as it is (there is no refusal
    /// to tell apart).
    ///
    /// ```
    /// use fusebox::retry::Retry;
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let retry = Retry::builder("retry-doc-plain").build().unwrap();
    /// let mut n = 0;
    /// let r: Result<u8, &str> = retry
    ///     .run_plain(|| { n += 1; let n = n; async move { if n < 2 { Err("reset") } else { Ok(7) } } }, |_| true, |_| None)
    ///     .await;
    /// assert_eq!(r, Ok(7));
    /// # }
    /// ```
    pub fn run_plain<'a, T, E, F, Fut, R, A>(
        &'a self,
        attempt: F,
        retry_on: R,
        retry_after: A,
    ) -> impl Future<Output = Result<T, E>> + use<'a, T, E, F, Fut, R, A>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        R: Fn(&E) -> bool,
        A: Fn(&E) -> Option<Duration>,
    {
        let judge = move |e: &E| (retry_on(e), retry_after(e));
        self.run_judged(attempt, judge, |_| false, |_| false)
    }

    /// The whole call: the first attempt here, the retries (if it failed) boxed in
    /// [`resume`](Self::resume). `judge` says of each error whether it may be retried and the
    /// dependency's hint, if any; `refusing` whether the attempts' breaker surely refuses
    /// for a wait.
    pub(crate) async fn run_judged<T, X, F, Fut, J, H, G>(
        &self,
        mut attempt: F,
        judge: J,
        on_hint: H,
        refusing: G,
    ) -> Result<T, X>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, X>>,
        J: Fn(&X) -> (bool, Option<Duration>),
        H: FnMut(Duration) -> bool,
        G: Fn(Duration) -> bool,
    {
        let deadline = self.begin();
        let err = match attempt().await {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        // Boxed: the waits and the next attempts' state stay out of every call's future, so
        // a first success moves and drops less; the one allocation is on the failure path.
        Box::pin(self.resume(deadline, err, attempt, judge, on_hint, refusing)).await
    }

    /// A call starts: it deposits into the budget, and reads the clock only for a deadline
    /// (`total` from now), which it returns. No lock, no allocation: what a first success
    /// pays.
    #[inline]
    pub(crate) fn begin(&self) -> Option<Instant> {
        self.budget.deposit();
        // A total past the clock's range is no total (`Instant + Duration` would panic), as a
        // breaker's `timeout` that long is no timeout.
        self.total.and_then(|t| Instant::now().checked_add(t))
    }

    /// The retries after a first attempt failed with `err` (`deadline`: what
    /// [`begin`](Self::begin) returned).
    ///
    /// A retry still running at the deadline is dropped there (its breaker counts it
    /// cancelled, not failed) and the call returns the error it was retrying: whatever one
    /// attempt may take (no `attempt_timeout` given, or a half-open trial's longer timeout),
    /// the retries never keep the caller past `total`.
    ///
    /// `refusing(wait)`: whether the breaker the attempts pass surely refuses every call for
    /// `wait` from now (open, forced open or held open past it, no probe due). Such a retry
    /// is not made: without the backoff's wait and without spending the budget, the call
    /// returns the refusal its next attempt, made at once, gets (what the retry would have
    /// got after its wait), so an open breaker costs a retrying caller no time.
    pub(crate) async fn resume<T, X, F, Fut, J, H, G>(
        &self,
        deadline: Option<Instant>,
        mut err: X,
        mut attempt: F,
        judge: J,
        mut on_hint: H,
        refusing: G,
    ) -> Result<T, X>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, X>>,
        J: Fn(&X) -> (bool, Option<Duration>),
        H: FnMut(Duration) -> bool,
        G: Fn(Duration) -> bool,
    {
        let mut retries = 0;
        loop {
            let (again, hint) = judge(&err);
            if let Some(h) = hint {
                if self.holds_open && on_hint(h) {
                    self.budget.count_held_open();
                }
            }
            if !again || retries + 1 >= self.attempts {
                return Err(err);
            }
            let wait = self.backoff.delay(retries).max(hint.unwrap_or_default());
            if !self.fits(deadline, wait) {
                return Err(err);
            }
            if refusing(wait) {
                // Surely refused through the wait: no retry is made (no budget spent, no
                // wait). The next attempt, made at once, is refused at once: its refusal is
                // the answer, as the retry's would have been after its wait.
                return attempt().await;
            }
            let Some(slot) = self.budget.withdraw() else {
                return Err(err);
            };
            // Dropped during the wait (the caller gave up), the retry is never made: it is
            // given back, so neither the metrics nor the name's budget count it.
            let unmade = Unmade {
                budget: &self.budget,
                slot,
            };
            sleep(wait).await;
            std::mem::forget(unmade);
            retries += 1;
            let next = attempt();
            let ended = match deadline {
                Some(deadline) => match timeout_at(deadline, next).await {
                    Ok(ended) => ended,
                    Err(_) => return Err(err),
                },
                None => next.await,
            };
            match ended {
                Ok(v) => return Ok(v),
                Err(e) => err = e,
            }
        }
    }

    /// The verdict on an attempt through a breaker: a counted failure per `retry_on` (with
    /// `retry_after`'s hint), a timeout only when idempotent, a refusal never.
    pub(crate) fn judge<E, R, A>(
        &self,
        retry_on: R,
        retry_after: A,
    ) -> impl Fn(&Error<E>) -> (bool, Option<Duration>) + use<E, R, A>
    where
        R: Fn(&E) -> bool,
        A: Fn(&E) -> Option<Duration>,
    {
        let idempotent = self.idempotent;
        move |err: &Error<E>| match err {
            Error::Failed(e) => (retry_on(e), retry_after(e)),
            Error::Rejected(Rejection::TimedOut { .. }) => (idempotent, None),
            // Refusals: an open breaker, a full bulkhead.
            Error::Rejected(_) => (false, None),
        }
    }

    /// Whether an attempt after `wait` could finish before the deadline.
    fn fits(&self, deadline: Option<Instant>, wait: Duration) -> bool {
        let Some(deadline) = deadline else {
            return true;
        };
        let ends = Instant::now()
            .checked_add(wait)
            .and_then(|t| t.checked_add(self.attempt_timeout.unwrap_or_default()));
        match (ends, self.attempt_timeout) {
            // Past the clock's range (a hint or a bound that long): past any deadline in it.
            (None, _) => false,
            (Some(ends), Some(_)) => ends <= deadline,
            (Some(ends), None) => ends < deadline,
        }
    }
}
