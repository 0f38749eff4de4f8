//! The lists of key names other code looks keys up in, each derived from the table at
//! compile time, so a key added to the table is in every list it belongs to.

use super::{Attribute, Key, ALL};

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

pub(super) const POOL_BOUNDS: [&str; group_len(Group::PoolBounds)] = names(Group::PoolBounds);

/// The slow-call rules written as a percentile.
pub(crate) const TRIP_KEYS: &[&str] = &TRIP;

/// The keys a user writes for an error's `field` (`trip_pNN` is any of the four).
pub(crate) fn written_as(field: &str) -> &'static [&'static str] {
    match field {
        "trip_pNN" => TRIP_KEYS,
        // The slow-call bound is `slow` or the duration of a `trip_p*`.
        "slow" => &SLOW_BOUND,
        other => Key::from_name(other).map_or(&[][..], name_slice),
    }
}

pub(super) fn name_slice(k: Key) -> &'static [&'static str] {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::rules::needed_by;

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
