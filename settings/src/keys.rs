//! The table: every settings key with its unit, its range and the words of its errors.

use std::time::Duration;

use crate::defaults::{MAX_COUNT, MAX_KEYS, MAX_POOL, MAX_WINDOW, MAX_WINDOW_CALLS};
use crate::{parse_duration, ConfigError};

/// What kind of value a key takes, and so how text is parsed and checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An integer percentage from 1 to 100.
    Percent,
    /// A whole number from 1 to `max`.
    Count {
        /// The largest accepted count.
        max: u64,
    },
    /// A duration string (`"800ms"`); zero only where `zero_ok`.
    Duration {
        /// Whether `"0ms"` makes sense for this key.
        zero_ok: bool,
    },
    /// A duration longer than zero and at most `max` (a window, whose slots count in `u32`s).
    Span {
        /// The longest accepted duration.
        max: Duration,
    },
    /// A finite factor of at least 1.0.
    Factor,
    /// One of a few words (`limit = "adaptive"`).
    Word {
        /// The accepted words.
        one_of: &'static [&'static str],
    },
}

macro_rules! table {
    ($($variant:ident = $name:literal, $field:literal, $kind:expr, $expected:literal;)*) => {
        /// A settings key of `#[breaker]` or `#[bulkhead]` (and of text settings).
        ///
        /// ```
        /// use fusebox_settings::{Key, Kind};
        /// let k = Key::from_name("window_calls").unwrap();
        /// assert_eq!(k.kind(), Kind::Count { max: 1_000_000 });
        /// assert_eq!(k.expected(), "a number of calls from 1 to 1000000");
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[allow(missing_docs)]
        pub enum Key { $($variant,)* }

        const ALL: &[Key] = &[$(Key::$variant,)*];

        impl Key {
            /// The key as written (`"half_open_pct"`).
            pub const fn name(self) -> &'static str {
                match self { $(Key::$variant => $name,)* }
            }
            /// The field its errors name: the key itself, except `trip_p*`, whose duration
            /// is the slow-call bound (`"slow"`).
            pub const fn field(self) -> &'static str {
                match self { $(Key::$variant => $field,)* }
            }
            /// The kind of value it takes.
            pub const fn kind(self) -> Kind {
                match self { $(Key::$variant => $kind,)* }
            }
            /// What a valid value looks like, as the error messages say it.
            pub const fn expected(self) -> &'static str {
                match self { $(Key::$variant => $expected,)* }
            }
        }
    };
}

table! {
    FailureRate = "failure_rate", "failure_rate", Kind::Percent, "a percentage from 1 to 100";
    Window = "window", "window", Kind::Span { max: MAX_WINDOW }, "a duration longer than zero and at most 1h";
    WindowCalls = "window_calls", "window_calls", Kind::Count { max: MAX_WINDOW_CALLS as u64 }, "a number of calls from 1 to 1000000";
    MinCalls = "min_calls", "min_calls", Kind::Count { max: MAX_COUNT as u64 }, "a number of calls from 1 to 1000000";
    Slow = "slow", "slow", Kind::Duration { zero_ok: false }, "a duration longer than zero";
    SlowRate = "slow_rate", "slow_rate", Kind::Percent, "a percentage from 1 to 100";
    TripP50 = "trip_p50", "slow", Kind::Duration { zero_ok: false }, "a duration longer than zero";
    TripP90 = "trip_p90", "slow", Kind::Duration { zero_ok: false }, "a duration longer than zero";
    TripP95 = "trip_p95", "slow", Kind::Duration { zero_ok: false }, "a duration longer than zero";
    TripP99 = "trip_p99", "slow", Kind::Duration { zero_ok: false }, "a duration longer than zero";
    Timeout = "timeout", "timeout", Kind::Duration { zero_ok: false }, "a duration longer than zero";
    HalfOpenTimeout = "half_open_timeout", "half_open_timeout", Kind::Duration { zero_ok: false }, "a duration longer than zero";
    HalfOpenSlow = "half_open_slow", "half_open_slow", Kind::Duration { zero_ok: false }, "a duration longer than zero";
    OpenFor = "open_for", "open_for", Kind::Duration { zero_ok: false }, "a duration longer than zero";
    Backoff = "backoff", "backoff", Kind::Factor, "a finite factor of at least 1.0";
    OpenForMax = "open_for_max", "open_for_max", Kind::Duration { zero_ok: false }, "a duration longer than zero";
    HalfOpenPct = "half_open_pct", "half_open_pct", Kind::Percent, "a percentage from 1 to 100";
    HalfOpenWindow = "half_open_window", "half_open_window", Kind::Duration { zero_ok: false }, "a duration longer than zero";
    HalfOpenCalls = "half_open_calls", "half_open_calls", Kind::Count { max: MAX_COUNT as u64 }, "a number of trial calls from 1 to 1000000";
    AlertAfter = "alert_after", "alert_after", Kind::Duration { zero_ok: false }, "a duration longer than zero";
    MaxKeys = "max_keys", "max_keys", Kind::Count { max: MAX_KEYS as u64 }, "a number of keys from 1 to 1000000";
    ProbeEvery = "probe_every", "probe_every", Kind::Duration { zero_ok: false }, "a duration longer than zero";
    Ramp = "ramp", "ramp", Kind::Duration { zero_ok: false }, "a duration longer than zero";
    Pool = "pool", "pool", Kind::Count { max: MAX_POOL as u64 }, "a number of calls in flight from 1 to 536870911";
    MaxWait = "max_wait", "max_wait", Kind::Duration { zero_ok: true }, "a duration";
    Limit = "limit", "limit", Kind::Word { one_of: &["fixed", "adaptive"] }, "\"fixed\" or \"adaptive\"";
    MinPool = "min_pool", "min_pool", Kind::Count { max: MAX_POOL as u64 }, "a number of calls in flight from 1 to 536870911";
    MaxPool = "max_pool", "max_pool", Kind::Count { max: MAX_POOL as u64 }, "a number of calls in flight from 1 to 536870911";
}

/// Every key of `#[breaker]` that is a setting, in the order text settings list them.
pub const BREAKER_KEYS: [&str; 23] = [
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
    "half_open_slow",
    "open_for",
    "backoff",
    "open_for_max",
    "half_open_pct",
    "half_open_window",
    "half_open_calls",
    "alert_after",
    "max_keys",
    "probe_every",
    "ramp",
];

/// The breaker's keys under the name the runtime exports (`SETTING_KEYS`).
pub const KEYS: [&str; 23] = BREAKER_KEYS;

/// Every key of `#[bulkhead]` that is a setting.
pub const BULKHEAD_KEYS: [&str; 5] = ["pool", "max_wait", "limit", "min_pool", "max_pool"];

/// The slow-call rules written as a percentile.
pub(crate) const TRIP_KEYS: &[&str] = &["trip_p50", "trip_p90", "trip_p95", "trip_p99"];

/// A value as parsed from text or given to a typed setter, before its range is checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value {
    Int(u64),
    Float(f64),
    Duration(Duration),
    Word(&'static str),
}

impl Key {
    /// The key named `name` (breaker or bulkhead), if it is a setting.
    pub fn from_name(name: &str) -> Option<Key> {
        ALL.iter().copied().find(|k| k.name() == name)
    }

    /// Every key, breaker keys first.
    pub fn all() -> &'static [Key] {
        ALL
    }

    /// Parses `text` as a value of this key and checks its range: the verdict a settings
    /// file, an environment variable and an attribute literal all get.
    pub(crate) fn parse(self, text: &str) -> Result<Value, ConfigError> {
        let not_a_number = || ConfigError::OutOfRange {
            field: self.field(),
            value: if text.is_empty() {
                "\"\"".into()
            } else {
                text.into()
            },
            expected: self.expected(),
        };
        let v = match self.kind() {
            Kind::Percent | Kind::Count { .. } => {
                Value::Int(text.parse().map_err(|_| not_a_number())?)
            }
            Kind::Factor => Value::Float(text.parse().map_err(|_| not_a_number())?),
            Kind::Duration { .. } | Kind::Span { .. } => Value::Duration(parse_duration(text)?),
            Kind::Word { one_of } => Value::Word(
                one_of
                    .iter()
                    .find(|w| **w == text)
                    .copied()
                    .ok_or_else(not_a_number)?,
            ),
        };
        self.check(v)?;
        Ok(v)
    }

    /// Checks a value of this key against its range alone (cross-key rules come later).
    pub(crate) fn check(self, v: Value) -> Result<(), ConfigError> {
        let out = |value: String| ConfigError::OutOfRange {
            field: self.field(),
            value,
            expected: self.expected(),
        };
        match (self.kind(), v) {
            (Kind::Percent, Value::Int(n)) if !(1..=100).contains(&n) => Err(out(n.to_string())),
            (Kind::Count { max }, Value::Int(n)) if !(1..=max).contains(&n) => {
                Err(out(n.to_string()))
            }
            (Kind::Factor, Value::Float(f)) if !f.is_finite() || f < 1.0 => Err(out(f.to_string())),
            (Kind::Span { max }, Value::Duration(d)) if d > max => Err(out(format!("{d:?}"))),
            (Kind::Duration { zero_ok: false } | Kind::Span { .. }, Value::Duration(d))
                if d.is_zero() =>
            {
                Err(ConfigError::ZeroDuration {
                    field: self.field(),
                })
            }
            _ => Ok(()),
        }
    }
}

/// The keys a user writes for an error's `field` (`trip_pNN` is any of the four).
pub(crate) fn written_as(field: &str) -> &'static [&'static str] {
    match field {
        "trip_pNN" => TRIP_KEYS,
        // The slow-call bound is `slow` or the duration of a `trip_p*`.
        "slow" => &["slow", "trip_p50", "trip_p90", "trip_p95", "trip_p99"],
        other => Key::from_name(other).map_or(&[][..], name_slice),
    }
}

fn name_slice(k: Key) -> &'static [&'static str] {
    let i = ALL.iter().position(|a| *a == k).unwrap_or(0);
    &NAMES[i..=i]
}

/// Every key's name, in the order of `ALL`, so one key's name can be lent as a slice.
const NAMES: [&str; ALL.len()] = {
    let mut names = [""; ALL.len()];
    let mut i = 0;
    while i < ALL.len() {
        names[i] = ALL[i].name();
        i += 1;
    }
    names
};

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
    if field == "limit" {
        return &["min_pool", "max_pool"];
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
    match (first, second) {
        _ if first == second => Some("give it once"),
        ("window", "window_calls") => Some(
            "the window is either a time span (`window`) or the last N calls (`window_calls`)",
        ),
        ("half_open_calls", "half_open_pct") | ("half_open_calls", "half_open_window") => {
            Some(HALF_OPEN)
        }
        ("slow", "trip_pNN") => Some(
            "a breaker has one slow-call rule (`trip_p50`/`trip_p90`/`trip_p95`/`trip_p99`, or `slow` with `slow_rate`)",
        ),
        _ => None,
    }
}
