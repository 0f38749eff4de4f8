//! The table: every settings key with its unit, its range and the words of its errors.

use std::time::Duration;

use crate::const_text::{text, Text};
use crate::defaults::{
    MAX_ATTEMPTS, MAX_BUDGET_FLOOR, MAX_COUNT, MAX_KEYS, MAX_POOL, MAX_WINDOW, MAX_WINDOW_CALLS,
};
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
    /// A whole number from 0 to `max` (a retry budget's share in percent, its floor), where
    /// zero is a choice: no share, or no floor.
    Upto {
        /// The largest accepted number.
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

/// Which attribute a key belongs to (text settings follow the breaker's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Attribute {
    Breaker,
    Bulkhead,
    Retry,
}

macro_rules! table {
    ($($variant:ident = $name:literal, $field:literal, $kind:expr, $noun:literal, $attr:ident;)*) => {
        /// A settings key of `#[breaker]`, `#[bulkhead]` or `#[retry]` (and of text settings).
        ///
        /// `#[retry]`'s `backoff` (the first wait, a duration) is a key of its own beside the
        /// breaker's (the growth of open periods, a factor): [`Key::from_name`] finds the
        /// breaker's, [`Key::retry_from_name`] the retry's.
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
            /// What a valid value looks like, as the error messages say it: written from the
            /// key's kind (and its limit, so a message cannot drift from the constant).
            pub const fn expected(self) -> &'static str {
                match self { $(Key::$variant => text!(describe($kind, $noun)),)* }
            }
            /// The attribute the key belongs to.
            pub(crate) const fn attribute(self) -> Attribute {
                match self { $(Key::$variant => Attribute::$attr,)* }
            }
        }
    };
}

// The one list of keys: every other list of names below is derived from it.
table! {
    FailureRate = "failure_rate", "failure_rate", Kind::Percent, "", Breaker;
    Window = "window", "window", Kind::Span { max: MAX_WINDOW }, "", Breaker;
    WindowCalls = "window_calls", "window_calls", Kind::Count { max: MAX_WINDOW_CALLS as u64 }, "calls", Breaker;
    MinCalls = "min_calls", "min_calls", Kind::Count { max: MAX_COUNT as u64 }, "calls", Breaker;
    Slow = "slow", "slow", Kind::Duration { zero_ok: false }, "", Breaker;
    SlowRate = "slow_rate", "slow_rate", Kind::Percent, "", Breaker;
    TripP50 = "trip_p50", "slow", Kind::Duration { zero_ok: false }, "", Breaker;
    TripP90 = "trip_p90", "slow", Kind::Duration { zero_ok: false }, "", Breaker;
    TripP95 = "trip_p95", "slow", Kind::Duration { zero_ok: false }, "", Breaker;
    TripP99 = "trip_p99", "slow", Kind::Duration { zero_ok: false }, "", Breaker;
    Timeout = "timeout", "timeout", Kind::Duration { zero_ok: false }, "", Breaker;
    HalfOpenTimeout = "half_open_timeout", "half_open_timeout", Kind::Duration { zero_ok: false }, "", Breaker;
    HalfOpenSlow = "half_open_slow", "half_open_slow", Kind::Duration { zero_ok: false }, "", Breaker;
    OpenFor = "open_for", "open_for", Kind::Duration { zero_ok: false }, "", Breaker;
    Backoff = "backoff", "backoff", Kind::Factor, "", Breaker;
    OpenForMax = "open_for_max", "open_for_max", Kind::Duration { zero_ok: false }, "", Breaker;
    HalfOpenPct = "half_open_pct", "half_open_pct", Kind::Percent, "", Breaker;
    HalfOpenWindow = "half_open_window", "half_open_window", Kind::Duration { zero_ok: false }, "", Breaker;
    HalfOpenCalls = "half_open_calls", "half_open_calls", Kind::Count { max: MAX_COUNT as u64 }, "trial calls", Breaker;
    AlertAfter = "alert_after", "alert_after", Kind::Duration { zero_ok: false }, "", Breaker;
    MaxKeys = "max_keys", "max_keys", Kind::Count { max: MAX_KEYS as u64 }, "keys", Breaker;
    ProbeEvery = "probe_every", "probe_every", Kind::Duration { zero_ok: false }, "", Breaker;
    Ramp = "ramp", "ramp", Kind::Duration { zero_ok: false }, "", Breaker;
    Pool = "pool", "pool", Kind::Count { max: MAX_POOL as u64 }, "calls in flight", Bulkhead;
    MaxWait = "max_wait", "max_wait", Kind::Duration { zero_ok: true }, "", Bulkhead;
    Limit = "limit", "limit", Kind::Word { one_of: &["fixed", "adaptive"] }, "", Bulkhead;
    MinPool = "min_pool", "min_pool", Kind::Count { max: MAX_POOL as u64 }, "calls in flight", Bulkhead;
    MaxPool = "max_pool", "max_pool", Kind::Count { max: MAX_POOL as u64 }, "calls in flight", Bulkhead;
    Attempts = "attempts", "attempts", Kind::Count { max: MAX_ATTEMPTS as u64 }, "attempts", Retry;
    RetryBackoff = "backoff", "backoff", Kind::Duration { zero_ok: false }, "", Retry;
    BackoffMax = "backoff_max", "backoff_max", Kind::Duration { zero_ok: false }, "", Retry;
    Budget = "budget", "budget", Kind::Upto { max: 100 }, "a percentage of the name's calls", Retry;
    BudgetFloor = "budget_floor", "budget_floor", Kind::Upto { max: MAX_BUDGET_FLOOR as u64 }, "a number of retries a second", Retry;
    BudgetWindow = "budget_window", "budget_window", Kind::Span { max: MAX_WINDOW }, "", Retry;
    Total = "total", "total", Kind::Duration { zero_ok: false }, "", Retry;
}

/// What a valid value of `kind` looks like; `noun` is what a count counts.
const fn describe(kind: Kind, noun: &str) -> Text {
    let text = Text::new();
    match kind {
        Kind::Percent => text.str("a percentage from 1 to 100"),
        Kind::Count { max } => text
            .str("a number of ")
            .str(noun)
            .str(" from 1 to ")
            .num(max),
        Kind::Upto { max } => text.str(noun).str(" from 0 to ").num(max),
        Kind::Duration { zero_ok: false } => text.str("a duration longer than zero"),
        Kind::Duration { zero_ok: true } => text.str("a duration"),
        Kind::Span { max } => text
            .str("a duration longer than zero and at most ")
            .duration(max),
        Kind::Factor => text.str("a finite factor of at least 1.0"),
        Kind::Word { one_of } => {
            // `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
            let (mut text, mut i) = (text, 0);
            while i < one_of.len() {
                if i > 0 {
                    text = text.str(if i + 1 == one_of.len() { " or " } else { ", " });
                }
                text = text.str("\"").str(one_of[i]).str("\"");
                i += 1;
            }
            text
        }
    }
}

/// The lists of key names that other code looks keys up in, each a filter of the table.
#[derive(Clone, Copy)]
enum Group {
    Breaker,
    Bulkhead,
    Retry,
    /// The keys that set the slow-call bound: `slow` and the `trip_p*`.
    SlowBound,
    /// The slow-call rules written as a percentile.
    Trip,
    /// The bounds of an adaptive pool, which need `limit = "adaptive"`.
    PoolBounds,
}

const fn in_group(k: Key, g: Group) -> bool {
    let slow_bound = str_eq(k.field(), Key::Slow.name());
    match g {
        Group::Breaker => matches!(k.attribute(), Attribute::Breaker),
        Group::Bulkhead => matches!(k.attribute(), Attribute::Bulkhead),
        Group::Retry => matches!(k.attribute(), Attribute::Retry),
        Group::SlowBound => slow_bound,
        Group::Trip => slow_bound && !matches!(k, Key::Slow),
        Group::PoolBounds => matches!(k, Key::MinPool | Key::MaxPool),
    }
}

const fn group_len(g: Group) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < ALL.len() {
        if in_group(ALL[i], g) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The names of `g`'s keys in table order (`N` is [`group_len`]).
const fn names<const N: usize>(g: Group) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut n, mut i) = (0, 0);
    while i < ALL.len() {
        if in_group(ALL[i], g) {
            out[n] = ALL[i].name();
            n += 1;
        }
        i += 1;
    }
    out
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Every key of `#[breaker]` that is a setting, in the order text settings list them.
pub const BREAKER_KEYS: [&str; group_len(Group::Breaker)] = names(Group::Breaker);

/// The breaker's keys under the name the runtime exports (`SETTING_KEYS`).
pub const KEYS: [&str; BREAKER_KEYS.len()] = BREAKER_KEYS;

/// Every key of `#[bulkhead]` that is a setting.
pub const BULKHEAD_KEYS: [&str; group_len(Group::Bulkhead)] = names(Group::Bulkhead);

/// Every key of `#[retry]` that is a setting (its other arguments, `retry_on`, `retry_after`,
/// `idempotent` and `crate`, are code or a flag, not values with a range).
pub const RETRY_KEYS: [&str; group_len(Group::Retry)] = names(Group::Retry);

const SLOW_BOUND: [&str; group_len(Group::SlowBound)] = names(Group::SlowBound);

const TRIP: [&str; group_len(Group::Trip)] = names(Group::Trip);

const POOL_BOUNDS: [&str; group_len(Group::PoolBounds)] = names(Group::PoolBounds);

/// The slow-call rules written as a percentile.
pub(crate) const TRIP_KEYS: &[&str] = &TRIP;

/// A value as parsed from text or given to a typed setter, before its range is checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value {
    Int(u64),
    Float(f64),
    Duration(Duration),
    Word(&'static str),
}

impl Key {
    /// The key named `name` (breaker or bulkhead, else retry), if it is a setting.
    pub fn from_name(name: &str) -> Option<Key> {
        ALL.iter().copied().find(|k| k.name() == name)
    }

    /// The key of `#[retry]` named `name`, if it is one of its settings.
    ///
    /// ```
    /// use fusebox_settings::{Key, Kind};
    /// let k = Key::retry_from_name("backoff").unwrap();
    /// assert_eq!(k.kind(), Kind::Duration { zero_ok: false });
    /// assert_eq!(Key::from_name("backoff").unwrap().kind(), Kind::Factor, "the breaker's");
    /// assert_eq!(Key::retry_from_name("budget").unwrap().expected(), "a percentage of the name's calls from 0 to 100");
    /// assert!(Key::retry_from_name("timeout").is_none());
    /// ```
    pub fn retry_from_name(name: &str) -> Option<Key> {
        ALL.iter()
            .copied()
            .find(|k| k.attribute() == Attribute::Retry && k.name() == name)
    }

    /// Every key: breaker keys first, then the bulkhead's, then the retry's.
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
            Kind::Percent | Kind::Count { .. } | Kind::Upto { .. } => {
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
            (Kind::Upto { max }, Value::Int(n)) if n > max => Err(out(n.to_string())),
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
        "slow" => &SLOW_BOUND,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each message states the limit of the constant its key is checked against.
    #[test]
    fn messages_state_the_limits_they_check() {
        for &k in ALL {
            match k.kind() {
                Kind::Count { max } => assert!(
                    k.expected().ends_with(&format!(" from 1 to {max}")),
                    "{k:?}: {}",
                    k.expected()
                ),
                Kind::Span { max } => {
                    let hours = max.as_secs() / 3600;
                    assert!(
                        k.expected().ends_with(&format!("at most {hours}h")),
                        "{k:?}"
                    );
                }
                _ => {}
            }
        }
        assert_eq!(
            Key::Pool.expected(),
            format!("a number of calls in flight from 1 to {MAX_POOL}")
        );
    }

    #[test]
    fn the_lists_are_the_table_split_by_attribute() {
        let breaker: Vec<_> = ALL
            .iter()
            .filter(|k| k.attribute() == Attribute::Breaker)
            .map(|k| k.name())
            .collect();
        assert_eq!(BREAKER_KEYS.to_vec(), breaker);
        assert_eq!(
            BULKHEAD_KEYS,
            ["pool", "max_wait", "limit", "min_pool", "max_pool"]
        );
        assert_eq!(TRIP_KEYS, ["trip_p50", "trip_p90", "trip_p95", "trip_p99"]);
        assert_eq!(
            written_as("slow"),
            ["slow", "trip_p50", "trip_p90", "trip_p95", "trip_p99"]
        );
        assert_eq!(needed_by("limit"), ["min_pool", "max_pool"]);
    }
}
