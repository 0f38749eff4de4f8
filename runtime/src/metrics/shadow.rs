//! A shadow configuration's figures in the snapshot (issue 29): what the candidate settings
//! would have done on the live breaker's calls (`breaker/shadow.rs` judges them).

use std::time::Duration;

use crate::breaker::core::Core;
use crate::settings::BreakerConfig;
use crate::state::State;

/// What a breaker's shadow settings would have done since they were set
/// ([`Breaker::set_shadow`](crate::Breaker::set_shadow)); the field `shadow` of
/// [`BreakerMetrics`](crate::BreakerMetrics). Times are ages, as `time_in_state` is:
/// serialized (feature `serde`) as seconds, `age_s`, `opened_ago_s`, `closed_ago_s`, and the
/// rates as `failure_rate_pct`, `slow_rate_pct`.
///
/// ```
/// use fusebox::{Breaker, State};
/// let live = Breaker::builder("shadow-metrics-doc").build_detached().unwrap();
/// assert!(live.metrics().shadow.is_none());
/// live.set_shadow([("failure_rate", "20")]).unwrap();
/// let s = live.metrics().shadow.unwrap();
/// assert_eq!((s.state, s.would_have_refused, s.opened_ago), (State::Closed, 0, None));
/// assert_eq!(s.settings.failure_rate(), 20);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct ShadowMetrics {
    /// The candidate settings, under the live breaker's name.
    pub settings: BreakerConfig,
    /// The state the shadow is in.
    pub state: State,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "age_s",
            serialize_with = "crate::metrics::export::json::secs"
        )
    )]
    /// Time since the shadow was set.
    pub age: Duration,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "opened_ago_s",
            serialize_with = "crate::metrics::export::json::opt_secs"
        )
    )]
    /// How long ago it would have opened from closed, last (`None`: never).
    pub opened_ago: Option<Duration>,
    #[cfg_attr(
        feature = "serde",
        serde(
            rename = "closed_ago_s",
            serialize_with = "crate::metrics::export::json::opt_secs"
        )
    )]
    /// How long ago it would have closed again after that (`None` while it would still be
    /// open or half-open, or never opened).
    pub closed_ago: Option<Duration>,
    /// Times it would have opened.
    pub openings: u64,
    /// Calls it would have refused.
    pub would_have_refused: u64,
    /// Calls of the live breaker it saw.
    pub calls_seen: u64,
    /// Calls in its window.
    pub window_calls: u64,
    #[cfg_attr(feature = "serde", serde(rename = "failure_rate_pct"))]
    /// Failed share of its window, in percent.
    pub failure_rate: f64,
    #[cfg_attr(feature = "serde", serde(rename = "slow_rate_pct"))]
    /// Slow share of its window, in percent.
    pub slow_rate: f64,
}

impl ShadowMetrics {
    pub(crate) fn of(core: &Core) -> Option<ShadowMetrics> {
        let r = core.shadow.get()?.report();
        let now = tokio::time::Instant::now();
        let ago = |t: tokio::time::Instant| now.saturating_duration_since(t);
        Some(ShadowMetrics {
            settings: r.settings,
            state: r.state,
            age: ago(r.set_at),
            opened_ago: r.would_have_opened_at.map(ago),
            closed_ago: r.would_have_closed_at.map(ago),
            openings: r.openings,
            would_have_refused: r.would_have_refused,
            calls_seen: r.calls_seen,
            window_calls: r.window_calls,
            failure_rate: r.failure_rate,
            slow_rate: r.slow_rate,
        })
    }
}
