//! The table: every settings key with its unit, its range and the words of its errors.
//!
//! This file is the table itself (one row per key, and what its messages say a valid value
//! is); the lists derived from it are in `names.rs`, parsing and range checks of one value in
//! `value.rs`, and the rules between keys (which needs which, which exclude each other) in
//! `rules.rs`.

mod names;
mod rules;
mod value;

pub(crate) use names::written_as;
pub use names::{BREAKER_KEYS, BULKHEAD_KEYS, KEYS, RETRY_KEYS};
pub(crate) use rules::{conflict_reason, missing, needed_by, NEEDS};
pub(crate) use value::{text_pair, Value};

use std::time::Duration;

use crate::const_text::{text, Text};
use crate::defaults::{
    MAX_ATTEMPTS, MAX_BUDGET_FLOOR, MAX_COUNT, MAX_KEYS, MAX_POOL, MAX_WINDOW, MAX_WINDOW_CALLS,
};

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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defaults::MAX_POOL;

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
}
