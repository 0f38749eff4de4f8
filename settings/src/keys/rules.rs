//! The rules between keys: the settings that need one another, and the ones that exclude each
//! other, with the words their errors use.

use super::names::{name_slice, POOL_BOUNDS};
use super::Key;
use crate::ConfigError;

/// A setting that another one needs: what the message says, and which given keys need it.
pub(crate) struct Needs {
    pub(crate) missing: &'static str,
    pub(crate) by: &'static str,
    pub(crate) hint: &'static str,
}

/// The pairs that only make sense together, in the order they are checked.
pub(crate) const NEEDS: [Needs; 4] = [
    Needs {
        missing: "slow_rate",
        by: "slow",
        hint: "`slow` needs the percent of slow calls that opens the breaker; add `slow_rate = 20`, or use `trip_p95 = \"...\"` instead",
    },
    Needs {
        missing: "slow",
        by: "slow_rate",
        hint: "`slow_rate` needs the latency that makes a call slow; add `slow = \"500ms\"` (`trip_pNN` sets its own rate)",
    },
    Needs {
        missing: "open_for_max",
        by: "backoff",
        hint: "growing open periods (`backoff`) are always capped; add `open_for_max = \"60s\"`",
    },
    Needs {
        missing: "backoff",
        by: "open_for_max",
        hint: "the cap only matters when open periods grow; add `backoff = 2.0`",
    },
];

/// What a bulkhead without `pool` is told.
pub(crate) const POOL_MISSING: &str =
    "a bulkhead needs the most calls allowed in flight at once, like `pool = 60`";

/// The error for `missing` not given although `by` was.
pub(crate) fn missing(missing: &'static str) -> ConfigError {
    let expected = NEEDS.iter().find(|n| n.missing == missing).map_or(
        if missing == "limit" {
            LIMIT_MISSING
        } else {
            POOL_MISSING
        },
        |n| n.hint,
    );
    ConfigError::OutOfRange {
        field: missing,
        value: String::new(),
        expected,
    }
}

/// What bounds given without `limit = "adaptive"` are told.
pub(crate) const LIMIT_MISSING: &str =
    "`min_pool` and `max_pool` bound a pool that sizes itself; add `limit = \"adaptive\"`";

/// The keys that need `field` (for a missing setting's error).
pub(crate) fn needed_by(field: &str) -> &'static [&'static str] {
    if field == Key::Limit.name() {
        return &POOL_BOUNDS;
    }
    NEEDS
        .iter()
        .find(|n| n.missing == field)
        .and_then(|n| Key::from_name(n.by))
        .map_or(&[][..], name_slice)
}

/// Why two settings exclude each other.
pub(crate) fn conflict_reason(first: &str, second: &str) -> Option<&'static str> {
    const HALF_OPEN: &str = "half-open admits either a share of traffic for a while (`half_open_pct`, `half_open_window`) or a fixed number of trial calls (`half_open_calls`)";
    const ONE_RULE: &str = "a breaker has one slow-call rule (`trip_p50`/`trip_p90`/`trip_p95`/`trip_p99`, or `slow` with `slow_rate`)";
    match (first, second) {
        ("trip_pNN", "trip_pNN") | ("slow", "trip_pNN") => Some(ONE_RULE),
        _ if first == second => Some("give it once"),
        ("window", "window_calls") => {
            Some("the window is either a time span (`window`) or the last N calls (`window_calls`)")
        }
        ("half_open_calls", "half_open_pct") | ("half_open_calls", "half_open_window") => {
            Some(HALF_OPEN)
        }
        _ => None,
    }
}
