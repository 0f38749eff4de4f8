//! A dependency's `retry_after` hint holds its breaker open until the time it gave.
//!
//! When a counted failure carries a hint (HTTP 429/503 `Retry-After`, gRPC's
//! `grpc-retry-pushback-ms`, read by the retry's `retry_after` hook), the dependency has said
//! when it will take calls again: every caller of that name, not only the one that was told,
//! should stop until then. [`Breaker::hold_open`] does it, and [`Retry::run_with_breaker`]
//! (like `#[retry]` and the tower `RetryLayer`) calls it for every hint.
//!
//! **A forced open with an expiry, not an "open until".** The breaker is forced open for
//! `min(hint, open_for_max)` (`State::ForcedOpen`, lapsing on its own like
//! [`Breaker::force_open_for`]), rather than put in `State::Open` with that deadline:
//! - the dependency's word is not the breaker's judgement: nothing is recorded in the window,
//!   the open-period growth (`backoff`) and the trip counters are left alone, and
//!   `retry_in`/the page show the exact lapse;
//! - it lapses into half-open like any timed forced open, so trials, not all traffic, find
//!   out whether the dependency kept its word;
//! - in fleet mode a forced open with expiry is what every instance already applies (a fleet
//!   override, timed on each instance's own clock), so the same hint stops the whole fleet:
//!   the IP-ban case, where one instance stopping is not enough;
//! - an operator's own force wins: a breaker forced closed is left closed, and one forced open
//!   longer (or without end) is not shortened;
//! - "open until then" is at least until then: a breaker already open for longer (its own
//!   `open_for` after a failed trial, a grown open period) is not shortened either, or a
//!   dependency answering `Retry-After: 1` to every trial would be tried every second.
//!
//! **The cap.** The hold is at most the breaker's `open_for_max()`: `open_for_max` when open
//! periods grow (`backoff`), else `open_for` (30 s by default, and 1 h for a breaker given
//! only its `timeout`, whose derived open periods grow up to an hour). A hint longer than that
//! still delays the caller's own next attempt by the whole hint (if its deadline allows);
//! other callers find the breaker half-open after the cap and trials decide.
//!
//! Each hold is logged at WARN and counted (`RetryMetrics::held_open`,
//! `fusebox_retry_held_open_total`).

use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use crate::breaker::Breaker;
use crate::error::Error;
use crate::retry::Retry;
use crate::state::State;

/// How fleet mode spreads a hold to every instance: installed by `fleet::join`.
static FLEET: OnceLock<fn(&str, Duration)> = OnceLock::new();

/// Fleet mode's hook, called after every hold this instance made (fleet is a higher layer).
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
pub(crate) fn set_fleet_hook(hook: fn(&str, Duration)) {
    let _ = FLEET.set(hook);
}

impl Breaker {
    /// Holds the breaker open for a dependency's `retry_after` hint: forced open for
    /// `min(hint, open_for_max)`, then half-open; in fleet mode on every instance. Returns
    /// whether it held it: not for a zero hint, a breaker an operator forced closed, or one
    /// already open or forced open at least that long. See [the module](crate::retry_after) for why
    /// it is a forced open with expiry and which cap applies.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::{Breaker, State};
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let b = Breaker::builder("hold-open-doc").open_for(Duration::from_secs(60)).build().unwrap();
    /// assert!(b.hold_open(Duration::from_secs(600)));
    /// assert_eq!(b.state(), State::ForcedOpen);
    /// assert_eq!(b.metrics().force_expires_in, Some(Duration::from_secs(60)), "capped");
    /// tokio::time::advance(Duration::from_secs(60)).await;
    /// assert_eq!(b.metrics().state, State::HalfOpen);
    /// # }
    /// ```
    pub fn hold_open(&self, hint: Duration) -> bool {
        let cap = self.config().settings().open_for_max();
        let hold = hint.min(cap);
        if hold.is_zero() {
            return false;
        }
        let core = &self.0;
        let now = core.clock().now();
        // Callers told together would each extend a hold by a hair: a tenth of slack.
        let enough = hold.saturating_sub(hold / 10);
        let longer = match core.state() {
            // An operator's word outranks a dependency's.
            State::ForcedClosed => true,
            State::ForcedOpen => core.force_expires_in(now).is_none_or(|l| l >= enough),
            // The breaker's own open period (after a failed trial, say) is its judgement:
            // a shorter hint would cut it and send trials sooner to a failing dependency.
            State::Open => core.open_left(now) >= enough,
            _ => false,
        };
        if longer {
            return false;
        }
        self.force_open_for(hold);
        tracing::warn!(
            breaker = self.name(),
            hint = ?hint,
            held = ?hold,
            cap = ?cap,
            "the dependency asked for no calls for {hint:?} (retry_after): breaker forced open for {hold:?}"
        );
        if let Some(fleet) = FLEET.get() {
            fleet(self.name(), hold);
        }
        true
    }
}

impl Breaker {
    /// Whether this breaker surely refuses every call for `wait` from now (open or forced
    /// open past it, no probe due before): a retry that would wait that long is not made.
    pub(crate) fn refuses_for(&self, wait: Duration) -> bool {
        let now = self.0.clock().now();
        self.0
            .refuses_through(now.saturating_add(crate::clock::nanos(wait)))
    }
}

impl Retry {
    /// [`run_with`](Retry::run_with) for attempts through `breaker`: every hint `retry_after`
    /// reads also holds the breaker open until then ([`Breaker::hold_open`]), so other
    /// callers stop too (unless built with `hold_open_on_retry_after(false)`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::retry::Retry;
    /// use fusebox::{Breaker, Error, State};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let b = Breaker::builder("run-with-breaker-doc").build().unwrap();
    /// let retry = Retry::builder("run-with-breaker-doc").attempts(1).build().unwrap();
    /// let r: Result<(), Error<u16>> = retry
    ///     .run_with_breaker(&b, || b.call(async { Err(429) }), |_| true, |_| Some(Duration::from_secs(5)))
    ///     .await;
    /// assert_eq!(r, Err(Error::Failed(429)));
    /// assert_eq!(b.state(), State::ForcedOpen, "every caller waits the 5 s");
    /// # }
    /// ```
    pub fn run_with_breaker<'a, T, E, F, Fut, R, A>(
        &'a self,
        breaker: &'a Breaker,
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
        let judge = self.judge(retry_on, retry_after);
        let on_hint = move |d| breaker.hold_open(d);
        self.run_judged(attempt, judge, on_hint, |wait| breaker.refuses_for(wait))
    }
}
