//! Every exported metric family: its name, whether it is a counter or a gauge, and its help
//! text, in the order `samples::visit` walks them.

use super::samples::{Family, Kind};

const fn fam(name: &'static str, kind: Kind, help: &'static str) -> Family {
    Family { name, kind, help }
}

pub(crate) const STATE: Family = fam(
    "fusebox_breaker_state",
    Kind::Gauge,
    "1 for the breaker's current state, 0 for the others.",
);
pub(crate) const TIME_IN_STATE: Family = fam(
    "fusebox_breaker_time_in_state_seconds",
    Kind::Gauge,
    "Seconds since the breaker's last transition.",
);
pub(crate) const CALLS: Family = fam(
    "fusebox_breaker_calls_total",
    Kind::Counter,
    "Calls that ran through the breaker, by outcome (rejected calls are in fusebox_breaker_rejected_total); ignored: calls classified ignored (no place in the window); an error the failure predicate excludes is succeeded (in the window as a call that did not fail).",
);
pub(crate) const RECORDING: Family = fam(
    "fusebox_breaker_recording",
    Kind::Gauge,
    "1 when calls go into the window; 0 only while forced closed without recording.",
);
pub(crate) const REJECTED: Family = fam(
    "fusebox_breaker_rejected_total",
    Kind::Counter,
    "Calls refused, by reason: open, forced_open, half_open (not admitted as a trial), ramp (closed, outside the ramp's share), bulkhead_full; timed_out counts calls cut off by the timeout (also in fusebox_breaker_calls_total).",
);
pub(crate) const SLOW: Family = fam(
    "fusebox_breaker_slow_calls_total",
    Kind::Counter,
    "Calls slower than the slow bound, including hung calls counted while in flight.",
);
pub(crate) const OPENED: Family = fam(
    "fusebox_breaker_opened_total",
    Kind::Counter,
    "Times the breaker opened.",
);
pub(crate) const WINDOW_CALLS: Family = fam(
    "fusebox_breaker_window_calls",
    Kind::Gauge,
    "Calls in the breaker's current window.",
);
pub(crate) const FAILURE_RATIO: Family = fam(
    "fusebox_breaker_failure_ratio",
    Kind::Gauge,
    "Failed share of the window's calls, from 0 to 1.",
);
pub(crate) const SLOW_RATIO: Family = fam(
    "fusebox_breaker_slow_ratio",
    Kind::Gauge,
    "Slow share of the window's calls, from 0 to 1.",
);
pub(crate) const LATENCY: Family = fam(
    "fusebox_breaker_latency_seconds",
    Kind::Gauge,
    "Latency quantiles over the window, in seconds (absent while the window is empty).",
);
pub(crate) const STUCK: Family = fam(
    "fusebox_breaker_stuck",
    Kind::Gauge,
    "1 when the breaker has been away from closed longer than alert_after: page someone.",
);
pub(crate) const RAMP_SHARE: Family = fam(
    "fusebox_breaker_ramp_share",
    Kind::Gauge,
    "While closed and ramping traffic back in after half-open passed: the share of calls admitted now, 0 to 1 (absent otherwise).",
);
pub(crate) const SLOW_BOUND: Family = fam(
    "fusebox_breaker_slow_bound_seconds",
    Kind::Gauge,
    "Latency from which a call starting now counts as slow, in seconds (absent without a slow rule).",
);
pub(crate) const USUAL_LATENCY: Family = fam(
    "fusebox_breaker_usual_latency_seconds",
    Kind::Gauge,
    "Under the slow rule derived from timeout alone: the dependency's usual latency as learned (90th percentile estimate), in seconds (absent until learned).",
);
pub(crate) const CONFLICTS: Family = fam(
    "fusebox_breaker_conflicts_total",
    Kind::Counter,
    "Registrations of this name with other settings (ignored; the first settings are kept).",
);
pub(crate) const STALE: Family = fam(
    "fusebox_breaker_stale_served_total",
    Kind::Counter,
    "Rejected or failed calls answered with the last good value (stale_for).",
);
pub(crate) const POOL: Family = fam(
    "fusebox_bulkhead_pool",
    Kind::Gauge,
    "Most calls the bulkhead lets in flight at once.",
);
pub(crate) const IN_FLIGHT: Family = fam(
    "fusebox_bulkhead_in_flight",
    Kind::Gauge,
    "Calls holding a bulkhead slot now.",
);
pub(crate) const PEAK: Family = fam(
    "fusebox_bulkhead_peak",
    Kind::Gauge,
    "Most calls ever in flight at once.",
);
pub(crate) const ADMITTED: Family = fam(
    "fusebox_bulkhead_admitted_total",
    Kind::Counter,
    "Calls that got a bulkhead slot.",
);
pub(crate) const FULL: Family = fam(
    "fusebox_bulkhead_rejected_total",
    Kind::Counter,
    "Calls refused because the pool was full.",
);
pub(crate) const BULKHEAD_CONFLICTS: Family = fam(
    "fusebox_bulkhead_conflicts_total",
    Kind::Counter,
    "Registrations of this name with other settings (ignored; the first settings are kept).",
);
pub(crate) const LIMIT_MIN: Family = fam(
    "fusebox_bulkhead_limit_min",
    Kind::Gauge,
    "The lowest an adaptive bulkhead's limit goes (min_pool); fusebox_bulkhead_pool is the limit now.",
);
pub(crate) const LIMIT_MAX: Family = fam(
    "fusebox_bulkhead_limit_max",
    Kind::Gauge,
    "The highest an adaptive bulkhead's limit goes (max_pool).",
);
pub(crate) const LIMIT_CHANGES: Family = fam(
    "fusebox_bulkhead_limit_changes_total",
    Kind::Counter,
    "Times an adaptive bulkhead's limit changed.",
);
pub(crate) const LIMIT_LATENCY: Family = fam(
    "fusebox_bulkhead_latency_seconds",
    Kind::Gauge,
    "An adaptive bulkhead's latencies: the last window's average (short) and the long-term average it is compared with (long).",
);

pub(crate) const KEYS: Family = fam(
    "fusebox_breaker_keys",
    Kind::Gauge,
    "Keys of a keyed breaker with a breaker of their own (at most max_keys).",
);
pub(crate) const MAX_KEYS: Family = fam(
    "fusebox_breaker_max_keys",
    Kind::Gauge,
    "The max_keys cap of a keyed breaker.",
);
pub(crate) const KEYS_OVERFLOWED: Family = fam(
    "fusebox_breaker_keys_overflowed_total",
    Kind::Counter,
    "Lookups of a new key sent to name/_overflow because the keyed breaker was at max_keys: raise max_keys or key by fewer values.",
);
pub(crate) const KEYS_EVICTED: Family = fam(
    "fusebox_breaker_keys_evicted_total",
    Kind::Counter,
    "Keys removed from a keyed breaker: idle ones at max_keys, and evicted by hand.",
);

pub(crate) const RETRY_ATTEMPTS: Family = fam(
    "fusebox_retry_attempts_total",
    Kind::Counter,
    "Attempts made by retries of this name: first attempts and retries.",
);
pub(crate) const RETRY_RETRIES: Family = fam(
    "fusebox_retry_retries_total",
    Kind::Counter,
    "Retries the name's budget granted.",
);
pub(crate) const RETRY_EXHAUSTED: Family = fam(
    "fusebox_retry_budget_exhausted_total",
    Kind::Counter,
    "Retries the name's budget refused (the failure was returned without another attempt).",
);
pub(crate) const RETRY_HELD_OPEN: Family = fam(
    "fusebox_retry_held_open_total",
    Kind::Counter,
    "Server hints (retry_after) that held the name's breaker open until the time they gave.",
);

pub(crate) const OVERRIDDEN: Family = fam(
    "fusebox_setting_overridden",
    Kind::Gauge,
    "1 for each setting of a breaker or bulkhead whose value in force is not the code's, labelled by the setting and where its value came from (env, file, admin, fleet); settings at the code's value have no sample.",
);
