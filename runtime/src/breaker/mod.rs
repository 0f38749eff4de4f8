//! The [`Breaker`] handle: one shared state machine per name.

pub(crate) mod admit;
mod call;
mod closed;
mod completion;
pub(crate) mod core;
mod counters;
pub(crate) mod events;
mod forced;
mod half_open;
mod keyed_call;
pub(crate) mod live;
mod open;
mod operator;
mod outcome;
pub(crate) mod permit;
mod ramp;
pub(crate) mod reading;
pub(crate) mod shadow;
mod slowness;
mod spread;
mod stuck;
mod transition;
mod usual;

use std::fmt;
use std::future::Future;
use std::sync::Arc;

pub use call::Completion;
pub(crate) use call::{run, run_classified, AsResult, Same};
pub(crate) use keyed_call::{run_keyed, run_keyed_classified, Lend, Loan};
pub use outcome::Outcome;
pub use shadow::{ShadowReport, ShadowSettings};

use self::core::Core;
use self::events::Events;
use crate::bulkhead::Bulkhead;
use crate::error::{ConfigError, Error};
use crate::settings::{BreakerBuilder, BreakerConfig};
use crate::state::State;

/// A handle to one circuit breaker. Cheap to clone; every clone drives the same state machine.
///
/// ```
/// use fusebox::{Breaker, Error, State};
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let breaker = Breaker::builder("inventory").window_calls(10).build().unwrap();
/// let answer: Result<u32, Error<std::io::Error>> = breaker.call(async { Ok(42) }).await;
/// assert_eq!(answer.unwrap(), 42);
/// assert_eq!(breaker.state(), State::Closed);
/// # }
/// ```
#[derive(Clone)]
pub struct Breaker(pub(crate) Arc<Core>);

impl Breaker {
    /// Starts configuring a breaker named `name`.
    pub fn builder(name: impl Into<String>) -> BreakerBuilder {
        BreakerBuilder::new(name)
    }

    /// A breaker outside any registry; its transitions go to the global channel.
    pub(crate) fn new(config: BreakerConfig) -> Breaker {
        Breaker::with_events(config, Events::global())
    }

    /// A breaker outside any registry, from settings already checked by
    /// [`BreakerBuilder::config`] (and perhaps renamed with [`BreakerConfig::with_key`]):
    /// what [`BreakerBuilder::build_detached`] returns, for callers that hold a config.
    /// Its transitions are broadcast on the global channel, like every detached breaker's.
    ///
    /// ```
    /// use fusebox::{registry, Breaker};
    /// let cfg = Breaker::builder("detached-doc").window_calls(3).config().unwrap();
    /// // One breaker per shard, none of them registered: e.g. for a simulation run twice.
    /// let shard = Breaker::detached(cfg.with_key("7"));
    /// assert_eq!(shard.name(), "detached-doc/7");
    /// assert!(registry().breaker("detached-doc/7").is_none());
    /// ```
    // The same as `BreakerBuilder::build_detached`, the one documented way: kept for callers
    // that hold a config, hidden so the documentation shows one way per purpose.
    #[doc(hidden)]
    pub fn detached(config: BreakerConfig) -> Breaker {
        Breaker::new(config)
    }

    pub(crate) fn with_events(config: BreakerConfig, events: Events) -> Breaker {
        Breaker(Arc::new(Core::new(config, events)))
    }

    /// Registry name (`name/key` for keyed breakers).
    pub fn name(&self) -> &str {
        &self.0.code_config().name
    }

    /// Its settings as the code gave them (the attribute's or the builder's); the ones in
    /// force, with overrides and live changes (issue 29), are
    /// [`config_in_force`](Breaker::config_in_force).
    pub fn config(&self) -> &BreakerConfig {
        self.0.code_config()
    }

    /// The current state: what the breaker's next call would find. A forced state whose time
    /// ran out ends here (see [`force_open_for`](Breaker::force_open_for)), an open period
    /// that ended goes half-open here, and a half-open whose verdict is due (its window over,
    /// or short of its `half_open_calls` at its bound) is judged here, and a live settings
    /// change whose time ran out ends here (the code's settings that return are judged).
    pub fn state(&self) -> State {
        if self.0.word().live() {
            self.0.lapse_live(self.0.clock().now());
        }
        let w = self.0.word();
        let moved = match w.state() {
            State::ForcedOpen | State::ForcedClosed => self.0.expire_force(w, self.0.clock().now()),
            State::HalfOpen => self.0.judge_due(w, self.0.clock().now()),
            State::Open => self.0.open_elapsed(w, self.0.clock().now()),
            _ => false,
        };
        if moved {
            return self.0.state();
        }
        w.state()
    }

    /// When the breaker entered its current state, on `tokio::time`'s clock (virtual under a
    /// paused clock). With [`state`](Breaker::state) it tells apart a breaker that stayed in a
    /// state from one that left it and came back, e.g. open again after a failed half-open.
    /// A breaker that never changed state: when it was first used (its annotated function
    /// called, or its name looked up in the registry), else when it was made.
    ///
    /// ```
    /// use fusebox::{Breaker, State};
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let b = Breaker::builder("since-doc").build_detached().unwrap();
    /// let before = b.state_since();
    /// tokio::time::advance(std::time::Duration::from_secs(5)).await;
    /// b.force_open();
    /// assert_eq!(b.state(), State::ForcedOpen);
    /// assert_eq!(b.state_since() - before, std::time::Duration::from_secs(5));
    /// # }
    /// ```
    pub fn state_since(&self) -> tokio::time::Instant {
        self.0.clock().instant(self.0.state_since())
    }

    /// While closed and ramping traffic back in after half-open passed (`ramp`): the share of
    /// calls admitted now; `None` otherwise. The same figure as
    /// [`BreakerMetrics::ramp_share`](crate::BreakerMetrics::ramp_share), without a snapshot.
    /// A half-open whose passed trials are due to close it is closed first, as
    /// [`state`](Breaker::state) does: the ramp starts there.
    ///
    /// ```
    /// use fusebox::Breaker;
    /// let b = Breaker::builder("ramp-share-handle-doc").build_detached().unwrap();
    /// assert_eq!(b.ramp_share(), None);
    /// ```
    pub fn ramp_share(&self) -> Option<f64> {
        // What a read applies first (a due verdict above all), as `state` does.
        self.state();
        self.0.ramp_share(self.0.clock().now())
    }

    /// Calls `fut` through the breaker; every `Err` counts as a failure.
    pub fn call<'a, T, E, F>(
        &'a self,
        fut: F,
    ) -> impl Future<Output = Result<T, Error<E>>> + use<'a, T, E, F>
    where
        F: Future<Output = Result<T, E>>,
    {
        // A future written by hand (`call.rs`), not an `async fn` around one: the caller's
        // future is stored once.
        run(&self.0, None, fut, |_| true, AsResult)
    }

    /// Calls `fut` through the breaker; only errors for which `is_failure` is true count as
    /// failures. An error it excludes counts as a **success** (it fills `min_calls`, lowers
    /// the failure rate, passes as a half-open trial) and is returned as
    /// `Completion::Ignored`, without the fallback; to have an error count as neither, use
    /// [`call_classified`](Self::call_classified) with [`Outcome::Ignored`].
    ///
    /// ```
    /// # use fusebox::Breaker;
    /// # use fusebox::call::Completion;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let b = Breaker::builder("catalog").build_detached().unwrap();
    /// // A 404 is the dependency answering, not failing.
    /// let c = b.call_filtered(async { Err::<(), u16>(404) }, |status| *status >= 500).await;
    /// assert!(matches!(c, Completion::Ignored(404)));
    /// # }
    /// ```
    pub fn call_filtered<'a, T, E, F, C>(
        &'a self,
        fut: F,
        is_failure: C,
    ) -> impl Future<Output = Completion<T, E>> + use<'a, T, E, F, C>
    where
        F: Future<Output = Result<T, E>>,
        C: FnOnce(&E) -> bool,
    {
        run(&self.0, None, fut, is_failure, Same)
    }

    /// Calls `fut` through the breaker and lets `classify` say what its result was: a
    /// success, a failure (an `Ok` too, returned as is), or ignored (no place in the window,
    /// not a half-open trial). See [`Outcome`] for what each does.
    ///
    /// ```
    /// # use fusebox::Breaker;
    /// # use fusebox::call::{Completion, Outcome};
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let b = Breaker::builder("http").build_detached().unwrap();
    /// let c = b
    ///     .call_classified(async { Ok::<u16, ()>(503) }, |r: &Result<u16, ()>| match r {
    ///         Ok(s) if *s >= 500 => Outcome::Failure,
    ///         Ok(_) => Outcome::Success,
    ///         Err(()) => Outcome::Failure,
    ///     })
    ///     .await;
    /// assert!(matches!(c, Completion::Ok(503)));
    /// assert_eq!(b.metrics().failed, 1);
    /// # }
    /// ```
    pub fn call_classified<'a, T, E, F, C>(
        &'a self,
        fut: F,
        classify: C,
    ) -> impl Future<Output = Completion<T, E>> + use<'a, T, E, F, C>
    where
        F: Future<Output = Result<T, E>>,
        C: FnOnce(&Result<T, E>) -> Outcome,
    {
        run_classified(&self.0, None, fut, classify)
    }

    /// Calls `fut` through the breaker, then the bulkhead: an open breaker takes no permit,
    /// and a full bulkhead is not counted as a failure of the dependency.
    pub fn call_in<'a, T, E, F>(
        &'a self,
        bulkhead: &'a Bulkhead,
        fut: F,
    ) -> impl Future<Output = Result<T, Error<E>>> + use<'a, T, E, F>
    where
        F: Future<Output = Result<T, E>>,
    {
        run(&self.0, Some(bulkhead), fut, |_| true, AsResult)
    }

    /// [`call_classified`](Breaker::call_classified) with a bulkhead, in the order of
    /// [`call_in`](Breaker::call_in): breaker admission, then a bulkhead slot, then the call,
    /// classified by `classify` as the attribute's `ignore` and `failure_if_ok` would. A full
    /// bulkhead is never a failure, whatever `classify` says.
    ///
    /// ```
    /// # use fusebox::{Breaker, Bulkhead};
    /// # use fusebox::call::{Completion, Outcome};
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let b = Breaker::builder("classified-in").build_detached().unwrap();
    /// let pool = Bulkhead::builder("classified-in").pool(2).build_detached().unwrap();
    /// let ignore_errors = |r: &Result<u16, &str>| match r {
    ///     Ok(s) if *s >= 500 => Outcome::Failure,
    ///     Ok(_) => Outcome::Success,
    ///     Err(_) => Outcome::Ignored,
    /// };
    /// let c = b.call_classified_in(&pool, async { Err("refused locally") }, ignore_errors).await;
    /// assert!(matches!(c, Completion::Ignored("refused locally")));
    /// assert_eq!((b.metrics().ignored, b.metrics().window_calls), (1, 0));
    /// # }
    /// ```
    pub fn call_classified_in<'a, T, E, F, C>(
        &'a self,
        bulkhead: &'a Bulkhead,
        fut: F,
        classify: C,
    ) -> impl Future<Output = Completion<T, E>> + use<'a, T, E, F, C>
    where
        F: Future<Output = Result<T, E>>,
        C: FnOnce(&Result<T, E>) -> Outcome,
    {
        run_classified(&self.0, Some(bulkhead), fut, classify)
    }

    /// True when both handles drive the same state machine.
    pub fn ptr_eq(&self, other: &Breaker) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl BreakerBuilder {
    /// Validates and returns a breaker that is not in the registry (for isolated tests,
    /// or users who keep their own).
    pub fn build_detached(&self) -> Result<Breaker, ConfigError> {
        Ok(Breaker::new(self.config()?))
    }
}

impl fmt::Debug for Breaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Breaker")
            .field("name", &self.name())
            .field("state", &self.state())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::events::Reason;
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn open_from_closed_opens_only_a_closed_breaker_and_probes_on_schedule() {
        let b = Breaker::builder("open-from-closed")
            .open_for(std::time::Duration::from_secs(5))
            .build_detached()
            .unwrap();
        let why = Reason::Quorum {
            open: 2,
            live: 3,
            threshold: 50,
        };
        assert!(b.open_from_closed(why.clone()));
        assert_eq!(b.state(), State::Open);
        assert!(!b.open_from_closed(why.clone()), "already open");
        tokio::time::advance(std::time::Duration::from_secs(5)).await;
        let _ = b.call(async { Ok::<_, ()>(()) }).await;
        assert_ne!(b.state(), State::Open, "the open period elapsed: it probes");
        b.force_open();
        assert!(!b.open_from_closed(why));
        assert_eq!(b.state(), State::ForcedOpen);
    }
}
