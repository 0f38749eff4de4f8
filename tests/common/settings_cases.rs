// The shared table of settings cases: every key's valid and invalid values, written as
// `#[breaker(...)]` / `#[bulkhead(...)]` arguments, with the one message every entry point
// gives (`None`: accepted). Included by the macros' unit test (the attribute) and by the
// facade's `tests/settings_agree.rs` (the builder's typed setters, `from_settings` and
// `from_vars`), so all three are held to the same words. A string literal's text is what a
// settings file or an environment variable holds for it (`1_000_000` is `1000000`).

/// `key = value, ...` as the `(key, text)` pairs a settings file holds: string literals lose
/// their quotes, numbers their `_` separators.
pub fn as_text(source: &str) -> Vec<(String, String)> {
    source
        .split(", ")
        .map(|pair| {
            let (k, v) = pair.split_once(" = ").expect("key = value");
            let v = v.trim_matches('"').replace('_', "");
            (k.to_owned(), v)
        })
        // `key = shard` is the attribute's alone: which argument keys the breaker.
        .filter(|(k, _)| k != "key")
        .collect()
}

/// `#[breaker]` arguments and the one verdict for them.
pub const BREAKER_CASES: &[(&str, Option<&str>)] = &[
    (r#"failure_rate = 1"#, None),
    (r#"failure_rate = 100"#, None),
    (r#"failure_rate = 0"#, Some(r#"`failure_rate` = 0 is out of range: expected a percentage from 1 to 100"#)),
    (r#"failure_rate = 101"#, Some(r#"`failure_rate` = 101 is out of range: expected a percentage from 1 to 100"#)),
    (r#"failure_rate = 99999999999999999999999"#, Some(r#"`failure_rate` = 99999999999999999999999 is out of range: expected a percentage from 1 to 100"#)),
    (r#"window = "1ns""#, None),
    (r#"window = "0s""#, Some(r#"`window` must be longer than zero, like "100ms""#)),
    (r#"window = "30 s""#, Some(r#"bad duration "30 s": `30` has no unit; expected a number with a unit (h, m, s, ms, us, ns), like "800ms", "3s", "1m30s" or "2h""#)),
    (r#"window_calls = 1"#, None),
    (r#"window_calls = 1000000"#, None),
    (r#"window_calls = 1_000_000"#, None),
    (r#"window_calls = 0"#, Some(r#"`window_calls` = 0 is out of range: expected a number of calls from 1 to 1000000"#)),
    (r#"window_calls = 2000000"#, Some(r#"`window_calls` = 2000000 is out of range: expected a number of calls from 1 to 1000000"#)),
    (r#"window_calls = -1"#, Some(r#"`window_calls` = -1 is out of range: expected a number of calls from 1 to 1000000"#)),
    (r#"window = "1s", window_calls = 3"#, Some(r#"`window` and `window_calls` cannot be used together: the window is either a time span (`window`) or the last N calls (`window_calls`)"#)),
    (r#"window_calls = 3, window = "1s""#, Some(r#"`window` and `window_calls` cannot be used together: the window is either a time span (`window`) or the last N calls (`window_calls`)"#)),
    (r#"min_calls = 1"#, None),
    (r#"min_calls = 1000000"#, None),
    (r#"min_calls = 1000001"#, Some(r#"`min_calls` = 1000001 is out of range: expected a number of calls from 1 to 1000000"#)),
    (r#"window = "1h""#, None),
    (r#"window = "61m""#, Some(r#"`window` = 3660s is out of range: expected a duration longer than zero and at most 1h"#)),
    (r#"min_calls = 0"#, Some(r#"`min_calls` = 0 is out of range: expected a number of calls from 1 to 1000000"#)),
    (r#"window_calls = 5, min_calls = 5"#, None),
    (r#"window_calls = 5, min_calls = 6"#, Some(r#"`min_calls` = 6 is out of range: expected at most `window_calls`, or the breaker could never judge"#)),
    (r#"slow = "1ns", slow_rate = 100"#, None),
    (r#"slow = "0ms", slow_rate = 20"#, Some(r#"`slow` must be longer than zero, like "100ms""#)),
    (r#"slow = "1s", slow_rate = 0"#, Some(r#"`slow_rate` = 0 is out of range: expected a percentage from 1 to 100"#)),
    (r#"slow = "1s", slow_rate = 101"#, Some(r#"`slow_rate` = 101 is out of range: expected a percentage from 1 to 100"#)),
    (r#"slow = "1s""#, Some(r#"`slow_rate` is missing: `slow` needs the percent of slow calls that opens the breaker; add `slow_rate = 20`, or use `trip_p95 = "..."` instead"#)),
    (r#"slow_rate = 20"#, Some(r#"`slow` is missing: `slow_rate` needs the latency that makes a call slow; add `slow = "500ms"` (`trip_pNN` sets its own rate)"#)),
    (r#"trip_p50 = "1s""#, None),
    (r#"trip_p90 = "1s""#, None),
    (r#"trip_p95 = "500ms""#, None),
    (r#"trip_p99 = "2s""#, None),
    (r#"trip_p50 = "0s""#, Some(r#"`slow` must be longer than zero, like "100ms""#)),
    (r#"trip_p90 = "0s""#, Some(r#"`slow` must be longer than zero, like "100ms""#)),
    (r#"trip_p95 = "0s""#, Some(r#"`slow` must be longer than zero, like "100ms""#)),
    (r#"trip_p99 = "0s""#, Some(r#"`slow` must be longer than zero, like "100ms""#)),
    (r#"failure_rate = 50.5"#, Some(r#"`failure_rate` takes a percentage from 1 to 100, not 50.5"#)),
    (r#"timeout = "1.5s""#, Some(r#"bad duration "1.5s": `1.` is a fraction: a duration takes whole numbers of a unit ("1500ms", not "1.5s"); expected a number with a unit (h, m, s, ms, us, ns), like "800ms", "3s", "1m30s" or "2h""#)),
    (r#"trip_p95 = "1s", trip_p99 = "2s""#, Some(r#"two `trip_pNN` rules cannot be used together: a breaker has one slow-call rule (`trip_p50`/`trip_p90`/`trip_p95`/`trip_p99`, or `slow` with `slow_rate`)"#)),
    (r#"slow = "1s", slow_rate = 20, trip_p95 = "1s""#, Some(r#"`slow` and `trip_pNN` cannot be used together: a breaker has one slow-call rule (`trip_p50`/`trip_p90`/`trip_p95`/`trip_p99`, or `slow` with `slow_rate`)"#)),
    (r#"timeout = "500ns""#, None),
    (r#"timeout = "0us""#, Some(r#"`timeout` must be longer than zero, like "100ms""#)),
    (r#"timeout = "800 millis""#, Some(r#"bad duration "800 millis": `800` has no unit; expected a number with a unit (h, m, s, ms, us, ns), like "800ms", "3s", "1m30s" or "2h""#)),
    (r#"timeout = "1s1m""#, Some(r#"bad duration "1s1m": units must go from largest to smallest, each once ("1m30s"); expected a number with a unit (h, m, s, ms, us, ns), like "800ms", "3s", "1m30s" or "2h""#)),
    (r#"half_open_timeout = "3s""#, None),
    (r#"half_open_timeout = "0s""#, Some(r#"`half_open_timeout` must be longer than zero, like "100ms""#)),
    (r#"trip_p95 = "500ms", half_open_slow = "3s""#, None),
    (r#"trip_p95 = "500ms", half_open_slow = "0s""#, Some(r#"`half_open_slow` must be longer than zero, like "100ms""#)),
    (r#"half_open_slow = "3s""#, Some(r#"`half_open_slow` = 3s is out of range: expected a slow-call rule for it to loosen (like `trip_p95 = "500ms"`, or `slow` with `slow_rate`); add one or remove `half_open_slow`"#)),
    (r#"open_for = "1ns""#, None),
    (r#"open_for = "0s""#, Some(r#"`open_for` must be longer than zero, like "100ms""#)),
    (r#"backoff = 1, open_for_max = "30s""#, None),
    (r#"backoff = 2.5, open_for_max = "1m""#, None),
    (r#"backoff = 0.5, open_for_max = "1m""#, Some(r#"`backoff` = 0.5 is out of range: expected a finite factor of at least 1.0"#)),
    (r#"backoff = -2.0, open_for_max = "1m""#, Some(r#"`backoff` = -2 is out of range: expected a finite factor of at least 1.0"#)),
    (r#"backoff = 2, open_for_max = "29s""#, Some(r#"`open_for_max` = 29s is out of range: expected at least `open_for`"#)),
    (r#"open_for = "1m", backoff = 2, open_for_max = "30s""#, Some(r#"`open_for_max` = 30s is out of range: expected at least `open_for`"#)),
    (r#"backoff = 2, open_for_max = "0s""#, Some(r#"`open_for_max` must be longer than zero, like "100ms""#)),
    (r#"backoff = 2.0"#, Some(r#"`open_for_max` is missing: growing open periods (`backoff`) are always capped; add `open_for_max = "60s"`"#)),
    (r#"open_for_max = "60s""#, Some(r#"`backoff` is missing: the cap only matters when open periods grow; add `backoff = 2.0`"#)),
    (r#"half_open_pct = 100"#, None),
    (r#"half_open_pct = 0"#, Some(r#"`half_open_pct` = 0 is out of range: expected a percentage from 1 to 100"#)),
    (r#"half_open_window = "1h""#, None),
    (r#"half_open_window = "0s""#, Some(r#"`half_open_window` must be longer than zero, like "100ms""#)),
    (r#"half_open_calls = 1000000"#, None),
    (r#"half_open_calls = 1000001"#, Some(r#"`half_open_calls` = 1000001 is out of range: expected a number of trial calls from 1 to 1000000"#)),
    (r#"half_open_calls = 0"#, Some(r#"`half_open_calls` = 0 is out of range: expected a number of trial calls from 1 to 1000000"#)),
    (r#"half_open_pct = 5, half_open_calls = 3"#, Some(r#"`half_open_calls` and `half_open_pct` cannot be used together: half-open admits either a share of traffic for a while (`half_open_pct`, `half_open_window`) or a fixed number of trial calls (`half_open_calls`)"#)),
    (r#"half_open_window = "1s", half_open_calls = 3"#, Some(r#"`half_open_calls` and `half_open_window` cannot be used together: half-open admits either a share of traffic for a while (`half_open_pct`, `half_open_window`) or a fixed number of trial calls (`half_open_calls`)"#)),
    (r#"alert_after = "5m""#, None),
    (r#"key = shard, max_keys = 1"#, None),
    (r#"key = shard, max_keys = 1000000"#, None),
    (r#"key = shard, max_keys = 0"#, Some(r#"`max_keys` = 0 is out of range: expected a number of keys from 1 to 1000000"#)),
    (r#"key = shard, max_keys = 1000001"#, Some(r#"`max_keys` = 1000001 is out of range: expected a number of keys from 1 to 1000000"#)),
    (r#"alert_after = "0m""#, Some(r#"`alert_after` must be longer than zero, like "100ms""#)),
    (r#"probe_every = "1s""#, None),
    (r#"open_for = "10s", probe_every = "9999ms""#, None),
    (r#"backoff = 2.0, open_for_max = "2m", probe_every = "1m""#, None),
    (r#"probe_every = "0s""#, Some(r#"`probe_every` must be longer than zero, like "100ms""#)),
    (r#"probe_every = "30s""#, Some(r#"`probe_every` = 30s is out of range: expected shorter than the open period (`open_for`, or `open_for_max` with `backoff`): probes are only sent while open"#)),
    (r#"open_for = "5s", probe_every = "1m""#, Some(r#"`probe_every` = 60s is out of range: expected shorter than the open period (`open_for`, or `open_for_max` with `backoff`): probes are only sent while open"#)),
    (r#"ramp = "20s""#, None),
    (r#"half_open_calls = 1, ramp = "1h""#, None),
    (r#"ramp = "0ms""#, Some(r#"`ramp` must be longer than zero, like "100ms""#)),
];

/// `#[bulkhead]` arguments and the one verdict for them.
pub const BULKHEAD_CASES: &[(&str, Option<&str>)] = &[
    (r#"pool = 1"#, None),
    (r#"pool = 536870911"#, None),
    (r#"pool = 536870912"#, Some(r#"`pool` = 536870912 is out of range: expected a number of calls in flight from 1 to 536870911"#)),
    (r#"pool = 0"#, Some(r#"`pool` = 0 is out of range: expected a number of calls in flight from 1 to 536870911"#)),
    (r#"pool = 60, max_wait = "0ms""#, None),
    (r#"pool = 60, max_wait = "5ns""#, None),
    (r#"pool = 60, max_wait = "5 ms""#, Some(r#"bad duration "5 ms": `5` has no unit; expected a number with a unit (h, m, s, ms, us, ns), like "800ms", "3s", "1m30s" or "2h""#)),
    (r#"max_wait = "5ms""#, Some(r#"`pool` is missing: a bulkhead needs the most calls allowed in flight at once, like `pool = 60`"#)),
    (r#"limit = "adaptive""#, None),
    (r#"limit = "adaptive", min_pool = 4, pool = 10, max_pool = 80"#, None),
    (r#"limit = "fixed", pool = 8"#, None),
    (r#"limit = "elastic""#, Some(r#"`limit` = elastic is out of range: expected "fixed" or "adaptive""#)),
    (r#"limit = "adaptive", min_pool = 0"#, Some(r#"`min_pool` = 0 is out of range: expected a number of calls in flight from 1 to 536870911"#)),
    (r#"limit = "adaptive", min_pool = 30, max_pool = 20"#, Some(r#"`max_pool` = 20 is out of range: expected a number of calls in flight of at least `min_pool`"#)),
    (r#"limit = "adaptive", pool = 300"#, Some(r#"`pool` = 300 is out of range: expected a start from `min_pool` to `max_pool` for an adaptive limit"#)),
    (r#"pool = 60, max_pool = 80"#, Some(r#"`limit` is missing: `min_pool` and `max_pool` bound a pool that sizes itself; add `limit = "adaptive"`"#)),
];

/// `#[retry]`'s settings (its code arguments, `retry_on`, `retry_after`, `idempotent`, are not
/// values with a range).
pub const RETRY_CASES: &[(&str, Option<&str>)] = &[
    (r#"attempts = 1"#, None),
    (r#"attempts = 10, total = "2s""#, None),
    (r#"attempts = 0"#, Some(r#"`attempts` = 0 is out of range: expected a number of attempts from 1 to 10"#)),
    (r#"attempts = 11"#, Some(r#"`attempts` = 11 is out of range: expected a number of attempts from 1 to 10"#)),
    (r#"backoff = "10ms", backoff_max = "10ms""#, None),
    (r#"backoff = "0ms""#, Some(r#"`backoff` must be longer than zero, like "100ms""#)),
    (r#"backoff = "3s""#, Some(r#"`backoff` = 3s is out of range: expected a first wait at most `backoff_max`, the cap of the waits, which is `2s` unless given: give `backoff_max` too"#)),
    (r#"backoff = "3s", backoff_max = "2s""#, Some(r#"`backoff_max` = 2s is out of range: expected a cap at least `backoff`, the first wait (defaults: `backoff = "50ms"`, `backoff_max = "2s"`)"#)),
    (r#"backoff_max = "5 s""#, Some(r#"bad duration "5 s": `5` has no unit; expected a number with a unit (h, m, s, ms, us, ns), like "800ms", "3s", "1m30s" or "2h""#)),
    (r#"budget = 0, budget_floor = 0"#, None),
    (r#"budget = 100, budget_floor = 1000, budget_window = "1h""#, None),
    (r#"budget = 101"#, Some(r#"`budget` = 101 is out of range: expected a percentage of the name's calls from 0 to 100"#)),
    (r#"budget_floor = 1001"#, Some(r#"`budget_floor` = 1001 is out of range: expected a number of retries a second from 0 to 1000"#)),
    (r#"budget_window = "61m""#, Some(r#"`budget_window` = 3660s is out of range: expected a duration longer than zero and at most 1h"#)),
    (r#"total = "0ms""#, Some(r#"`total` must be longer than zero, like "100ms""#)),
];
