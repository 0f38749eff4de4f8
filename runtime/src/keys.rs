//! The names of every breaker setting, as text sources (`from_settings`, `from_env`) spell them.
//!
//! Kept at the bottom of the stack: the settings parser accepts exactly these, and an unknown
//! key's error message lists them, so both read the one list.

/// Every key [`BreakerBuilder::from_settings`](crate::settings::BreakerBuilder::from_settings) understands.
pub const KEYS: [&str; 20] = [
    "failure_rate",
    "window",
    "window_calls",
    "min_calls",
    "slow",
    "slow_rate",
    "trip_p50",
    "trip_p90",
    "trip_p95",
    "trip_p99",
    "timeout",
    "half_open_timeout",
    "open_for",
    "backoff",
    "open_for_max",
    "half_open_pct",
    "half_open_window",
    "half_open_calls",
    "alert_after",
    "max_keys",
];
