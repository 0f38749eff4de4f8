//! What an operator (or the fleet) does to a breaker through its handle: hold it open or
//! closed, for a while or until released, reset it, or open it for the fleet's quorum. The
//! state machine's side of each is `forced.rs` (and `transition.rs` for the quorum's opening).

use std::time::Duration;

use super::events::Reason;
use super::Breaker;
use crate::state::State;

impl Breaker {
    /// Holds the breaker open: every call is rejected until `force_close` or `reset`.
    /// Held longer than `alert_after`, the breaker is `stuck` (metrics, one ERROR).
    pub fn force_open(&self) {
        self.force(State::ForcedOpen, Reason::Forced, None);
    }

    /// Holds the breaker closed: every call goes through and nothing trips, until `reset`.
    /// Logged at WARN (nothing protects the dependency); held longer than `alert_after`, the
    /// breaker is `stuck`.
    ///
    /// Calls are still **recorded** into the window (resilience4j's METRICS_ONLY): the
    /// metrics keep showing the dependency's failure rate, and the window is what the breaker
    /// judges by once released with `reset`. For "record nothing", see
    /// [`force_close_unrecorded`](Breaker::force_close_unrecorded).
    pub fn force_close(&self) {
        self.force(State::ForcedClosed, Reason::Forced, None);
    }

    /// Holds the breaker closed and records nothing into its window (resilience4j's
    /// DISABLED), e.g. while a dependency is being worked on: every call goes through and is
    /// counted in the lifetime counters only. The state is `ForcedClosed`; the metrics'
    /// `recording` is false. Ended by `reset` or any other force.
    ///
    /// ```
    /// use fusebox::{Breaker, Error, State};
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let b = Breaker::builder("unrecorded-doc").build_detached().unwrap();
    /// b.force_close_unrecorded();
    /// let _: Result<(), Error<&str>> = b.call(async { Err("maintenance") }).await;
    /// let m = b.metrics();
    /// assert_eq!((m.state, m.recording, m.window_calls, m.failed), (State::ForcedClosed, false, 0, 1));
    /// # }
    /// ```
    pub fn force_close_unrecorded(&self) {
        let now = self.0.clock().now();
        self.0
            .force_recording(State::ForcedClosed, Reason::Forced, None, false, now);
    }

    /// [`force_open`](Breaker::force_open) for `d` on `tokio::time`'s clock; then the breaker
    /// goes half-open, so trials decide whether the dependency is back. The expiry is checked
    /// lazily, at the next admission or metrics snapshot: no timer task runs.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::{Breaker, State};
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let b = Breaker::builder("force-for-doc").build_detached().unwrap();
    /// b.force_open_for(Duration::from_secs(600));
    /// assert_eq!(b.state(), State::ForcedOpen);
    /// tokio::time::advance(Duration::from_secs(600)).await;
    /// assert_eq!(b.metrics().state, State::HalfOpen);
    /// # }
    /// ```
    pub fn force_open_for(&self, d: Duration) {
        self.force(State::ForcedOpen, Reason::Forced, Some(d));
    }

    /// [`force_close`](Breaker::force_close) for `d`; then back to closed with an empty window.
    /// Checked lazily like [`force_open_for`](Breaker::force_open_for).
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::{Breaker, Error, State};
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let b = Breaker::builder("force-close-for-doc").build_detached().unwrap();
    /// b.force_close_for(Duration::from_secs(60));
    /// tokio::time::advance(Duration::from_secs(60)).await;
    /// let _: Result<(), Error<()>> = b.call(async { Ok(()) }).await;
    /// assert_eq!(b.state(), State::Closed);
    /// # }
    /// ```
    pub fn force_close_for(&self, d: Duration) {
        self.force(State::ForcedClosed, Reason::Forced, Some(d));
    }

    /// [`force_close_unrecorded`](Breaker::force_close_unrecorded) for `d`; then back to
    /// closed with an empty window, recording again.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::{Breaker, State};
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// let b = Breaker::builder("unrecorded-for-doc").build_detached().unwrap();
    /// b.force_close_unrecorded_for(Duration::from_secs(60));
    /// assert!(!b.metrics().recording);
    /// tokio::time::advance(Duration::from_secs(60)).await;
    /// assert_eq!((b.metrics().state, b.metrics().recording), (State::Closed, true));
    /// # }
    /// ```
    pub fn force_close_unrecorded_for(&self, d: Duration) {
        let now = self.0.clock().now();
        self.0
            .force_recording(State::ForcedClosed, Reason::Forced, Some(d), false, now);
    }

    /// Back to `Closed` with an empty window and no open-period growth. A breaker given only
    /// its `timeout` also forgets the dependency's usual latency it learned
    /// ([`BreakerMetrics::usual_latency`](crate::BreakerMetrics::usual_latency)): the answers
    /// that come next are the usual, as after a start.
    pub fn reset(&self) {
        self.force(State::Closed, Reason::Reset, None);
    }

    /// Opens a `Closed` breaker as if its own window had tripped (fleet quorum): it then
    /// probes on its own schedule. Any other state is left alone; returns whether it opened.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn open_from_closed(&self, reason: Reason) -> bool {
        // A ramp whose time is up ends first, so the open period's growth is the fresh one.
        self.0.settle_ramp(self.0.clock().now());
        let w = self.0.word();
        w.state() == State::Closed
            && self
                .0
                .transition(Some(w), State::Open, reason, self.0.clock().now())
    }

    fn force(&self, to: State, reason: Reason, for_: Option<Duration>) {
        let now = self.0.clock().now();
        self.0.force(to, reason, for_, now);
    }
}
