//! One breaker's figures at one instant: `BreakerMetrics`, what `metrics()` and
//! `Breaker::metrics` report for it, and `RejectedByReason`.

use crate::breaker::admit::{trip_reason, Judged};
use crate::breaker::core::{pct, Core};
use crate::breaker::reading::{dated, Reading};
use crate::metrics::shadow::ShadowMetrics;
use crate::settings::SettingInForce;
use crate::state::State;
use crate::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// The figures of one breaker at one instant.
///
/// Serialized (feature `serde`) under the field names below, except that durations become
/// seconds as `f64` with an `_s` suffix (`time_in_state_s`, `p50_s`, `p95_s`, `p99_s`) and
/// the rates carry a `_pct` suffix (`failure_rate_pct`, `slow_rate_pct`).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct BreakerMetrics {
    /// Full registry name (`name/key` for keyed breakers).
    pub name: String,
    /// The key of a keyed breaker.
    pub key: Option<String>,
    /// Current state.
    pub state: State,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "time_in_state_s",
            serialize_with = "crate::metrics::export::json::secs"
        )
    )]
    /// Time since the last transition: for a state reported before it is applied (an open
    /// period that ended, a forced state that ran out, a half-open whose verdict is due,
    /// applied by the breaker's next call or [`Breaker::state`](crate::Breaker::state)),
    /// since it fell due. A breaker that never changed state: since its first use (the first
    /// call of its annotated function, or its first lookup by name in the registry, on that
    /// caller's clock), else since it was made.
    pub time_in_state: Duration,
    /// Every call that asked to go through: the sum of the outcomes below plus `rejected`
    /// and `rejected_by_bulkhead` (a call the breaker let through that a full bulkhead then
    /// refused).
    pub calls: u64,
    /// Calls that succeeded: an `Ok` (not counted a failure by `failure_if_ok`), or an `Err`
    /// the `failure` predicate excludes (the dependency answered: a 404 is a sign of health),
    /// as the window records them. Counted on each calling thread's own line and added up as
    /// it is read, so it never goes down from one snapshot to the next, across windows a live
    /// settings change starts too.
    pub succeeded: u64,
    /// Calls that returned a counted `Err`.
    pub failed: u64,
    /// Calls that ended ignored, neither success nor failure (`ignore`, `Outcome::Ignored`):
    /// no place in the window, not a trial. Only those: an `Err` the `failure` predicate
    /// excludes is counted in `succeeded`.
    pub ignored: u64,
    /// Calls cut off by the timeout (failures).
    pub timed_out: u64,
    /// Calls that panicked (failures).
    pub panicked: u64,
    /// Calls dropped before they finished (not failures).
    pub cancelled: u64,
    /// Calls refused by this breaker (open, forced open, half-open not admitted, outside a
    /// ramp's share): the sum of the first four of [`rejected_by_reason`](Self::rejected_by_reason).
    pub rejected: u64,
    /// Rejections by reason, the bulkhead's and the timeout's included.
    pub rejected_by_reason: RejectedByReason,
    /// Calls admitted by this breaker and then refused by a full bulkhead.
    pub rejected_by_bulkhead: u64,
    /// Calls slower than the slow bound (including those counted while in flight).
    pub slow: u64,
    /// Whether calls go into the window: false only while forced closed without recording
    /// ([`Breaker::force_close_unrecorded`](crate::Breaker::force_close_unrecorded)); a plain
    /// `force_close` records.
    pub recording: bool,
    /// Calls in the current window.
    pub window_calls: u64,
    #[cfg_attr(feature = "serde", serde(rename = "failure_rate_pct"))]
    /// Failed share of the window, in percent.
    pub failure_rate: f64,
    #[cfg_attr(feature = "serde", serde(rename = "slow_rate_pct"))]
    /// Slow share of the window, in percent.
    pub slow_rate: f64,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "p50_s",
            serialize_with = "crate::metrics::export::json::opt_secs"
        )
    )]
    /// Latency percentiles over the window (`None` when the window is empty).
    ///
    /// A call is timed from the end of its first poll to its answer; a call that answers
    /// within its first poll (a cache hit, a ready value) reads no clock and counts as zero.
    /// The slow rule and the timeout use the same measure.
    ///
    /// Estimates: the window keeps a log-scale histogram (two buckets per doubling, from
    /// 128 µs to about 100 s; one relaxed add per call, nothing sorted), and a percentile is
    /// interpolated within its bucket, so it can be off by up to a third of its value, above
    /// the slowest call too (20 calls of 100 ms read as a p50 near 115 ms). What opens the
    /// breaker is exact: `trip_p95` counts calls past its bound, it reads no estimate.
    pub p50: Option<Duration>,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "p95_s",
            serialize_with = "crate::metrics::export::json::opt_secs"
        )
    )]
    /// 95th percentile.
    pub p95: Option<Duration>,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "p99_s",
            serialize_with = "crate::metrics::export::json::opt_secs"
        )
    )]
    /// 99th percentile.
    pub p99: Option<Duration>,
    /// Times the breaker opened (a reopening reported before it is applied included).
    pub times_opened: u64,
    /// Away from closed (or held in a forced state) longer than `alert_after`.
    pub stuck: bool,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "force_expires_in_s",
            serialize_with = "crate::metrics::export::json::opt_secs"
        )
    )]
    /// Time left of a forced state given a duration (`force_open_for`, `?for=10m`).
    pub force_expires_in: Option<Duration>,
    /// While `Closed` and ramping traffic back in after half-open passed (`ramp`): the share
    /// of calls admitted now, from the half-open share up to 1.0. `None` otherwise: every call
    /// goes through when closed, and the other states say what they admit.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::Breaker;
    /// let b = Breaker::builder("ramp-share-doc").ramp(Duration::from_secs(20)).build_detached().unwrap();
    /// assert_eq!(b.metrics().ramp_share, None); // closed, not ramping
    /// ```
    pub ramp_share: Option<f64>,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "slow_bound_s",
            serialize_with = "crate::metrics::export::json::opt_secs"
        )
    )]
    /// The latency from which a call starting now counts as slow (`None`: no slow rule). Under
    /// the rule derived from `timeout` alone: half the timeout, or five times
    /// [`usual_latency`](Self::usual_latency) once learned, whichever is shorter (never under
    /// 100 ms).
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::Breaker;
    /// let b = Breaker::builder("slow-bound-doc").timeout(Duration::from_secs(30)).build_detached().unwrap();
    /// let m = b.metrics();
    /// assert_eq!((m.slow_bound, m.usual_latency), (Some(Duration::from_secs(15)), None));
    /// ```
    pub slow_bound: Option<Duration>,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "usual_latency_s",
            serialize_with = "crate::metrics::export::json::opt_secs"
        )
    )]
    /// Under the slow rule derived from `timeout` alone, the dependency's usual latency as
    /// learned from its last answers (an estimate of their 90th percentile), once a hundred
    /// answers have taught it; [`Breaker::reset`](crate::Breaker::reset) forgets it. `None`
    /// under any other rule.
    pub usual_latency: Option<Duration>,
    /// Registrations of this name with other settings (ignored; the first settings are kept).
    pub conflicts: u64,
    /// Rejected or failed calls answered with the last good value (`stale_for`).
    pub stale_served: u64,
    /// What shadow settings would have done on these calls, while a shadow is set
    /// ([`Breaker::set_shadow`](crate::Breaker::set_shadow), issue 29).
    pub shadow: Option<ShadowMetrics>,
    // Settings outside the code (issue 29).
    /// Every setting in force, with the code's value and where the one in force came from
    /// (`code`, `env`, `file`, `admin`, `fleet`).
    ///
    /// ```
    /// use fusebox::Breaker;
    /// use fusebox::settings::Source;
    /// let b = Breaker::builder("settings-metrics-doc").build_detached().unwrap();
    /// b.change_settings([("failure_rate", "80")], Source::Admin, None).unwrap();
    /// let m = b.metrics();
    /// let over: Vec<_> = m.settings.iter().filter(|s| s.overridden()).map(|s| s.key).collect();
    /// assert_eq!(over, ["failure_rate"]);
    /// ```
    pub settings: Arc<[SettingInForce]>,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "settings_change_expires_in_s",
            serialize_with = "crate::metrics::export::json::opt_secs"
        )
    )]
    /// Time left of a live settings change given a duration (admin `for`, fleet TTL).
    pub settings_change_expires_in: Option<Duration>,
}

/// Why calls were refused: the breaker's own three reasons, then a full bulkhead and the timeout.
///
/// ```
/// use fusebox::{Breaker, Error};
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let b = Breaker::builder("by-reason-doc").build_detached().unwrap();
/// b.force_open();
/// let _: Result<(), Error<()>> = b.call(async { Ok(()) }).await;
/// let m = b.metrics();
/// assert_eq!((m.rejected_by_reason.forced_open, m.rejected_by_reason.open), (1, 0));
/// assert_eq!(m.rejected, 1);
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct RejectedByReason {
    /// Refused while open (`Rejection::Open` with state `Open`).
    pub open: u64,
    /// Refused while forced open by an operator.
    pub forced_open: u64,
    /// Refused in half-open: not chosen as a trial.
    pub half_open: u64,
    /// Refused while closed and ramping traffic back in (`ramp`): outside the ramp's share.
    pub ramp: u64,
    /// Admitted by the breaker, then refused by a full bulkhead (`rejected_by_bulkhead`).
    pub bulkhead_full: u64,
    /// Cut off by the timeout (`Rejection::TimedOut`; also `timed_out`, a failure).
    pub timed_out: u64,
}

impl BreakerMetrics {
    pub(crate) fn of(core: &Core) -> BreakerMetrics {
        let now = core.clock().now();
        // A snapshot only reads: taken on another runtime's clock (a parallel test's paused
        // clock, ahead of this breaker's), it must not end a forced state or a live settings
        // change, judge a half-open or age the window of a breaker whose calls run on an
        // earlier clock. A forced state or a settings change whose time ran out, or a
        // half-open whose verdict is due, is reported as what it becomes (the settings, the
        // window and the slow bound that return); the breaker's next call (or
        // `Breaker::state`, or a read of its settings) applies it.
        let (settings, settings_change_expires_in, slow_bound, (totals, latency), returns) = core
            .live_seen_at(now, |seen| {
                let bound = core.slow_bound(seen.config);
                let view = seen.window.view(now);
                (
                    seen.settings,
                    seen.expires_in,
                    bound,
                    view,
                    seen.code_returns,
                )
            });
        let mut reading = core.reading_at(now);
        if let Some(at) = returns {
            // The code's settings, back, are judged at once on the window as it is.
            let closed = reading.state == State::Closed && core.word().state() == State::Closed;
            if closed && matches!(trip_reason(core.code_config(), totals), Judged::Trips(_)) {
                reading = Reading {
                    state: State::Open,
                    since: dated(at, reading.since, now),
                    reopened: true,
                };
            }
        }
        let state = reading.state;
        let c = &core.counters;
        let load = |a: &AtomicU64| a.load(Relaxed);
        let [p50, p95, p99] = latency.quantiles([0.50, 0.95, 0.99]);
        let (succeeded, refused) = c.succeeded_and_refused();
        let (failed, ignored) = (load(&c.failed), load(&c.ignored));
        let (timed_out, panicked, cancelled) =
            (load(&c.timeouts), load(&c.panicked), load(&c.cancelled));
        let by_reason = RejectedByReason {
            open: refused.open,
            forced_open: refused.forced_open,
            half_open: refused.half_open,
            ramp: refused.ramp,
            bulkhead_full: load(&c.rejected_full),
            timed_out,
        };
        let rejected = refused.total();
        let rejected_full = by_reason.bulkhead_full;
        BreakerMetrics {
            name: core.config().name().to_owned(),
            key: core.config().key().map(str::to_owned),
            state,
            time_in_state: Duration::from_nanos(now.saturating_sub(reading.since)),
            calls: succeeded
                + failed
                + ignored
                + timed_out
                + panicked
                + cancelled
                + rejected
                + rejected_full,
            succeeded,
            failed,
            ignored,
            timed_out,
            panicked,
            cancelled,
            rejected,
            rejected_by_reason: by_reason,
            rejected_by_bulkhead: rejected_full,
            slow: load(&c.slow),
            // Only a forced closed state records nothing: one that ran out records again.
            recording: state != State::ForcedClosed || core.recording(),
            window_calls: totals.calls,
            failure_rate: pct(totals.failures, totals.calls),
            slow_rate: pct(totals.slow, totals.calls),
            p50,
            p95,
            p99,
            times_opened: load(&c.times_opened) + u64::from(reading.reopened),
            // A half-open whose passed trials close it is healthy, however long ago that was due.
            stuck: state != State::Closed && core.stuck_seen(now),
            force_expires_in: matches!(state, State::ForcedOpen | State::ForcedClosed)
                .then(|| core.force_expires_in(now))
                .flatten(),
            ramp_share: core.ramp_share_seen(state, now),
            slow_bound,
            usual_latency: core.usual_latency(),
            conflicts: load(&c.conflicts),
            stale_served: load(&c.stale_served),
            shadow: ShadowMetrics::of(core),
            settings,
            settings_change_expires_in,
        }
    }

    /// Counted failures: failed, timed out and panicked calls.
    pub fn failures(&self) -> u64 {
        self.failed + self.timed_out + self.panicked
    }
}
