//! Every key's valid and invalid values, given as text and through the typed setters, get the
//! same verdict and the same message: the text entry (settings files, environment) and the
//! builder cannot drift apart again.

use std::time::Duration;

use fusebox_settings::{
    ConfigError, Key, RawBulkheadSettings, RawRetrySettings, RawSettings, Settings, BREAKER_KEYS,
    BULKHEAD_KEYS, RETRY_KEYS,
};

const S: Duration = Duration::from_secs(1);
const MS: Duration = Duration::from_millis(1);

type Typed = fn(RawSettings) -> RawSettings;

/// Text pairs, the same settings through typed setters, and the error's message (`None`: valid).
type Case = (Pairs, Typed, Option<&'static str>);
type Pairs = &'static [(&'static str, &'static str)];

fn cases() -> Vec<Case> {
    vec![
        (&[("failure_rate", "1")], |r| r.failure_rate(1), None),
        (&[("failure_rate", "100")], |r| r.failure_rate(100), None),
        (&[("failure_rate", "0")], |r| r.failure_rate(0), Some("`failure_rate` = 0 is out of range: expected a percentage from 1 to 100")),
        (&[("failure_rate", "101")], |r| r.failure_rate(101), Some("`failure_rate` = 101 is out of range: expected a percentage from 1 to 100")),
        (&[("window", "1ns")], |r| r.window(Duration::from_nanos(1)), None),
        (&[("window", "0s")], |r| r.window(Duration::ZERO), Some("`window` must be longer than zero, like \"100ms\"")),
        (&[("window_calls", "1")], |r| r.window_calls(1), None),
        (&[("window_calls", "1000000")], |r| r.window_calls(1_000_000), None),
        (&[("window_calls", "0")], |r| r.window_calls(0), Some("`window_calls` = 0 is out of range: expected a number of calls from 1 to 1000000")),
        (&[("window_calls", "2000000")], |r| r.window_calls(2_000_000), Some("`window_calls` = 2000000 is out of range: expected a number of calls from 1 to 1000000")),
        (&[("window", "1s"), ("window_calls", "3")], |r| r.window(S).window_calls(3), Some("`window` and `window_calls` cannot be used together: the window is either a time span (`window`) or the last N calls (`window_calls`)")),
        (&[("min_calls", "1")], |r| r.min_calls(1), None),
        (&[("min_calls", "1000000")], |r| r.min_calls(1_000_000), None),
        (&[("min_calls", "1000001")], |r| r.min_calls(1_000_001), Some("`min_calls` = 1000001 is out of range: expected a number of calls from 1 to 1000000")),
        (&[("min_calls", "0")], |r| r.min_calls(0), Some("`min_calls` = 0 is out of range: expected a number of calls from 1 to 1000000")),
        (&[("window_calls", "5"), ("min_calls", "5")], |r| r.window_calls(5).min_calls(5), None),
        (&[("window_calls", "5"), ("min_calls", "6")], |r| r.window_calls(5).min_calls(6), Some("`min_calls` = 6 is out of range: expected at most `window_calls`, or the breaker could never judge")),
        (&[("slow", "1ns"), ("slow_rate", "100")], |r| r.slow(Duration::from_nanos(1), 100), None),
        (&[("slow", "0ms"), ("slow_rate", "20")], |r| r.slow(Duration::ZERO, 20), Some("`slow` must be longer than zero, like \"100ms\"")),
        (&[("slow", "1s"), ("slow_rate", "0")], |r| r.slow(S, 0), Some("`slow_rate` = 0 is out of range: expected a percentage from 1 to 100")),
        (&[("slow", "1s"), ("slow_rate", "101")], |r| r.slow(S, 101), Some("`slow_rate` = 101 is out of range: expected a percentage from 1 to 100")),
        (&[("trip_p50", "1s")], |r| r.trip_p50(S), None),
        (&[("trip_p90", "1s")], |r| r.trip_p90(S), None),
        (&[("trip_p95", "500ms")], |r| r.trip_p95(500 * MS), None),
        (&[("trip_p99", "2s")], |r| r.trip_p99(2 * S), None),
        (&[("trip_p95", "0s")], |r| r.trip_p95(Duration::ZERO), Some("`slow` must be longer than zero, like \"100ms\"")),
        (&[("trip_p95", "1s"), ("trip_p99", "2s")], |r| r.trip_p95(S).trip_p99(2 * S), Some("two `trip_pNN` rules cannot be used together: a breaker has one slow-call rule (`trip_p50`/`trip_p90`/`trip_p95`/`trip_p99`, or `slow` with `slow_rate`)")),
        (&[("slow", "1s"), ("slow_rate", "20"), ("trip_p95", "1s")], |r| r.slow(S, 20).trip_p95(S), Some("`slow` and `trip_pNN` cannot be used together: a breaker has one slow-call rule (`trip_p50`/`trip_p90`/`trip_p95`/`trip_p99`, or `slow` with `slow_rate`)")),
        (&[("timeout", "500ns")], |r| r.timeout(Duration::from_nanos(500)), None),
        (&[("timeout", "0us")], |r| r.timeout(Duration::ZERO), Some("`timeout` must be longer than zero, like \"100ms\"")),
        (&[("half_open_timeout", "3s")], |r| r.half_open_timeout(3 * S), None),
        (&[("half_open_timeout", "0s")], |r| r.half_open_timeout(Duration::ZERO), Some("`half_open_timeout` must be longer than zero, like \"100ms\"")),
        (&[("trip_p95", "500ms"), ("half_open_slow", "3s")], |r| r.trip_p95(S / 2).half_open_slow(3 * S), None),
        (&[("half_open_slow", "3s")], |r| r.half_open_slow(3 * S), Some("`half_open_slow` = 3s is out of range: expected a slow-call rule for it to loosen (like `trip_p95 = \"500ms\"`, or `slow` with `slow_rate`); add one or remove `half_open_slow`")),
        (&[("open_for", "1ns")], |r| r.open_for(Duration::from_nanos(1)), None),
        (&[("open_for", "0s")], |r| r.open_for(Duration::ZERO), Some("`open_for` must be longer than zero, like \"100ms\"")),
        (&[("backoff", "1"), ("open_for_max", "30s")], |r| r.backoff(1.0, 30 * S), None),
        (&[("backoff", "2.5"), ("open_for_max", "1m")], |r| r.backoff(2.5, 60 * S), None),
        (&[("backoff", "0.5"), ("open_for_max", "1m")], |r| r.backoff(0.5, 60 * S), Some("`backoff` = 0.5 is out of range: expected a finite factor of at least 1.0")),
        (&[("backoff", "NaN"), ("open_for_max", "1m")], |r| r.backoff(f64::NAN, 60 * S), Some("`backoff` = NaN is out of range: expected a finite factor of at least 1.0")),
        (&[("backoff", "inf"), ("open_for_max", "1m")], |r| r.backoff(f64::INFINITY, 60 * S), Some("`backoff` = inf is out of range: expected a finite factor of at least 1.0")),
        (&[("backoff", "2"), ("open_for_max", "29s")], |r| r.backoff(2.0, 29 * S), Some("`open_for_max` = 29s is out of range: expected at least `open_for`")),
        (&[("backoff", "2"), ("open_for_max", "0s")], |r| r.backoff(2.0, Duration::ZERO), Some("`open_for_max` must be longer than zero, like \"100ms\"")),
        (&[("half_open_pct", "100")], |r| r.half_open_pct(100), None),
        (&[("half_open_pct", "0")], |r| r.half_open_pct(0), Some("`half_open_pct` = 0 is out of range: expected a percentage from 1 to 100")),
        (&[("half_open_window", "1h")], |r| r.half_open_window(3600 * S), None),
        (&[("half_open_window", "0s")], |r| r.half_open_window(Duration::ZERO), Some("`half_open_window` must be longer than zero, like \"100ms\"")),
        (&[("half_open_calls", "1000000")], |r| r.half_open_calls(1_000_000), None),
        (&[("half_open_calls", "1000001")], |r| r.half_open_calls(1_000_001), Some("`half_open_calls` = 1000001 is out of range: expected a number of trial calls from 1 to 1000000")),
        (&[("half_open_calls", "0")], |r| r.half_open_calls(0), Some("`half_open_calls` = 0 is out of range: expected a number of trial calls from 1 to 1000000")),
        (&[("half_open_pct", "5"), ("half_open_calls", "3")], |r| r.half_open_pct(5).half_open_calls(3), Some("`half_open_calls` and `half_open_pct` cannot be used together: half-open admits either a share of traffic for a while (`half_open_pct`, `half_open_window`) or a fixed number of trial calls (`half_open_calls`)")),
        (&[("half_open_window", "1s"), ("half_open_calls", "3")], |r| r.half_open_window(S).half_open_calls(3), Some("`half_open_calls` and `half_open_window` cannot be used together: half-open admits either a share of traffic for a while (`half_open_pct`, `half_open_window`) or a fixed number of trial calls (`half_open_calls`)")),
        (&[("alert_after", "5m")], |r| r.alert_after(300 * S), None),
        (&[("max_keys", "1")], |r| r.max_keys(1), None),
        (&[("max_keys", "1000000")], |r| r.max_keys(1_000_000), None),
        (&[("max_keys", "0")], |r| r.max_keys(0), Some("`max_keys` = 0 is out of range: expected a number of keys from 1 to 1000000")),
        (&[("max_keys", "1000001")], |r| r.max_keys(1_000_001), Some("`max_keys` = 1000001 is out of range: expected a number of keys from 1 to 1000000")),
        (&[("alert_after", "0m")], |r| r.alert_after(Duration::ZERO), Some("`alert_after` must be longer than zero, like \"100ms\"")),
        (&[("probe_every", "1s")], |r| r.probe_every(S), None),
        (&[("probe_every", "0s")], |r| r.probe_every(Duration::ZERO), Some("`probe_every` must be longer than zero, like \"100ms\"")),
        (&[("probe_every", "30s")], |r| r.probe_every(30 * S), Some("`probe_every` = 30s is out of range: expected shorter than the open period (`open_for`, or `open_for_max` with `backoff`): probes are only sent while open")),
        (&[("backoff", "2"), ("open_for_max", "1m"), ("probe_every", "30s")], |r| r.backoff(2.0, 60 * S).probe_every(30 * S), None),
        (&[("ramp", "20s")], |r| r.ramp(20 * S), None),
        (&[("ramp", "0s")], |r| r.ramp(Duration::ZERO), Some("`ramp` must be longer than zero, like \"100ms\"")),
    ]
}

fn from_text(pairs: &[(&str, &str)]) -> Result<Settings, ConfigError> {
    RawSettings::from_text(pairs.iter().copied())
}

#[test]
fn text_and_typed_setters_give_one_verdict_and_one_message() {
    let mut covered = Vec::new();
    for (pairs, typed, want) in cases() {
        let text = from_text(pairs);
        let typed = typed(RawSettings::new()).check();
        assert_eq!(text, typed, "{pairs:?}");
        match (want, &text) {
            (None, Ok(_)) => {}
            (Some(msg), Err(e)) => assert_eq!(e.to_string(), msg, "{pairs:?}"),
            (want, got) => panic!("{pairs:?}: wanted {want:?}, got {got:?}"),
        }
        covered.extend(pairs.iter().map(|(k, _)| *k));
    }
    // The table exercises every breaker key, valid and invalid.
    for key in BREAKER_KEYS {
        assert!(covered.contains(&key), "no case for `{key}`");
    }
}

#[test]
fn an_accepted_value_is_the_value_that_runs() {
    let s = from_text(&[
        ("window_calls", "10"),
        ("timeout", "1m30s"),
        ("backoff", "2"),
        ("open_for_max", "2m"),
        ("half_open_calls", "3"),
    ])
    .unwrap();
    let typed = RawSettings::new()
        .window_calls(10)
        .timeout(90 * S)
        .backoff(2.0, 120 * S)
        .half_open_calls(3)
        .check()
        .unwrap();
    assert_eq!(s, typed);
    // A small count window lowers the default `min_calls` so the breaker can judge.
    assert_eq!(s.min_calls(), 10);
    assert_eq!(s.open_period(1), 60 * S);
    assert_eq!(
        s.half_open_timeout(),
        Some(90 * S),
        "falls back to `timeout`"
    );
}

#[test]
fn no_setting_gives_the_documented_defaults() {
    let d = RawSettings::new().check().unwrap();
    assert_eq!(d, Settings::default());
    assert_eq!(from_text(&[]).unwrap(), d);
    assert_eq!(d.failure_rate(), 50);
    assert_eq!(d.min_calls(), 20);
    assert_eq!(d.open_for(), 30 * S);
    assert_eq!(d.alert_after(), 300 * S);
    assert_eq!(d.open_period(10), 30 * S, "no growth unless asked");
}

#[test]
fn text_refuses_what_only_text_can_get_wrong() {
    let table: &[(&[(&str, &str)], &str)] = &[
        (&[("timeout", "800")], "bad duration \"800\": `800` has no unit; expected a number with a unit (h, m, s, ms, us, ns), like \"800ms\", \"3s\", \"1m30s\" or \"2h\""),
        (&[("failure_rate", "fifty")], "`failure_rate` takes a percentage from 1 to 100, not fifty"),
        (&[("failure_rate", "50.5")], "`failure_rate` takes a percentage from 1 to 100, not 50.5"),
        (&[("window", "2h")], "`window` = 7200s is out of range: expected a duration longer than zero and at most 1h"),
        (&[("failure_rate", "300")], "`failure_rate` = 300 is out of range: expected a percentage from 1 to 100"),
        (&[("window_calls", "-1")], "`window_calls` = -1 is out of range: expected a number of calls from 1 to 1000000"),
        (&[("min_calls", "99999999999999999999")], "`min_calls` = 99999999999999999999 is out of range: expected a number of calls from 1 to 1000000"),
        (&[("half_open_calls", "")], "`half_open_calls` takes a number of trial calls from 1 to 1000000, not \"\""),
        (&[("backoff", "2")], "`open_for_max` is missing: growing open periods (`backoff`) are always capped; add `open_for_max = \"60s\"`"),
        (&[("open_for_max", "1m")], "`backoff` is missing: the cap only matters when open periods grow; add `backoff = 2.0`"),
        (&[("slow", "1s")], "`slow_rate` is missing: `slow` needs the percent of slow calls that opens the breaker; add `slow_rate = 20`, or use `trip_p95 = \"...\"` instead"),
        (&[("slow_rate", "5")], "`slow` is missing: `slow_rate` needs the latency that makes a call slow; add `slow = \"500ms\"` (`trip_pNN` sets its own rate)"),
        (&[("timeout", "1s"), ("timeout", "2s")], "`timeout` and `timeout` cannot be used together: give it once"),
        (&[("TIMEOUT", "1s")], "unknown setting `TIMEOUT` (did you mean `timeout`?): expected one of failure_rate, window, window_calls, min_calls, slow, slow_rate, trip_p50, trip_p90, trip_p95, trip_p99, timeout, half_open_timeout, half_open_slow, open_for, backoff, open_for_max, half_open_pct, half_open_window, half_open_calls, alert_after, max_keys, probe_every, ramp"),
        (&[("pool", "3")], "unknown setting `pool`: expected one of failure_rate, window, window_calls, min_calls, slow, slow_rate, trip_p50, trip_p90, trip_p95, trip_p99, timeout, half_open_timeout, half_open_slow, open_for, backoff, open_for_max, half_open_pct, half_open_window, half_open_calls, alert_after, max_keys, probe_every, ramp"),
    ];
    for (pairs, want) in table {
        assert_eq!(
            from_text(pairs).unwrap_err().to_string(),
            *want,
            "{pairs:?}"
        );
    }
}

#[test]
fn every_key_is_in_the_table_with_its_kind() {
    for name in BREAKER_KEYS.iter().chain(&BULKHEAD_KEYS) {
        let k = Key::from_name(name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(k.name(), *name);
        assert!(!k.expected().is_empty());
    }
    for name in &RETRY_KEYS {
        let k = Key::retry_from_name(name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(k.name(), *name);
        assert!(!k.expected().is_empty());
    }
    assert_eq!(
        Key::all().len(),
        BREAKER_KEYS.len() + BULKHEAD_KEYS.len() + RETRY_KEYS.len()
    );
}

#[test]
fn a_limit_is_a_word() {
    let mut raw = RawBulkheadSettings::new();
    let e = raw.set_text("limit", "elastic").unwrap_err();
    assert_eq!(
        e.to_string(),
        "`limit` = elastic is out of range: expected \"fixed\" or \"adaptive\""
    );
    raw.set_text("limit", "fixed").unwrap();
    raw.set_text("pool", "3").unwrap();
    assert_eq!(
        raw.check().unwrap().limit(),
        fusebox_settings::PoolLimit::Fixed
    );
    assert_eq!(
        RawBulkheadSettings::new()
            .adaptive()
            .max_pool(10)
            .check()
            .unwrap()
            .pool(),
        10,
        "the default start is clamped into the bounds"
    );
}

#[test]
fn bulkhead_text_and_typed_setters_agree() {
    type Bulk = fn(RawBulkheadSettings) -> RawBulkheadSettings;
    let cases: &[(Pairs, Bulk, Option<&str>)] = &[
        (&[("pool", "1")], |r| r.pool(1), None),
        (&[("pool", "536870911")], |r| r.pool(536_870_911), None),
        (&[("pool", "60"), ("max_wait", "0ms")], |r| r.pool(60).max_wait(Duration::ZERO), None),
        (&[("pool", "0")], |r| r.pool(0), Some("`pool` = 0 is out of range: expected a number of calls in flight from 1 to 536870911")),
        (&[("pool", "536870912")], |r| r.pool(536_870_912), Some("`pool` = 536870912 is out of range: expected a number of calls in flight from 1 to 536870911")),
        (&[("max_wait", "5ms")], |r| r.max_wait(5 * MS), Some("`pool` is missing: a bulkhead needs the most calls allowed in flight at once, like `pool = 60`")),
        (&[("limit", "adaptive")], |r| r.adaptive(), None),
        (&[("limit", "adaptive"), ("min_pool", "4"), ("pool", "10"), ("max_pool", "80")], |r| r.adaptive().min_pool(4).pool(10).max_pool(80), None),
        (&[("limit", "adaptive"), ("min_pool", "0")], |r| r.adaptive().min_pool(0), Some("`min_pool` = 0 is out of range: expected a number of calls in flight from 1 to 536870911")),
        (&[("limit", "adaptive"), ("max_pool", "536870912")], |r| r.adaptive().max_pool(536_870_912), Some("`max_pool` = 536870912 is out of range: expected a number of calls in flight from 1 to 536870911")),
        (&[("limit", "adaptive"), ("min_pool", "30"), ("max_pool", "20")], |r| r.adaptive().min_pool(30).max_pool(20), Some("`max_pool` = 20 is out of range: expected a number of calls in flight of at least `min_pool`")),
        (&[("limit", "adaptive"), ("pool", "300")], |r| r.adaptive().pool(300), Some("`pool` = 300 is out of range: expected a start from `min_pool` to `max_pool` for an adaptive limit")),
        (&[("limit", "adaptive"), ("min_pool", "30"), ("pool", "10")], |r| r.adaptive().min_pool(30).pool(10), Some("`pool` = 10 is out of range: expected a start from `min_pool` to `max_pool` for an adaptive limit")),
        (&[("pool", "60"), ("max_pool", "80")], |r| r.pool(60).max_pool(80), Some("`limit` is missing: `min_pool` and `max_pool` bound a pool that sizes itself; add `limit = \"adaptive\"`")),
    ];
    for (pairs, typed, want) in cases {
        let mut raw = RawBulkheadSettings::new();
        let text = pairs
            .iter()
            .try_for_each(|(k, v)| raw.set_text(k, v))
            .and_then(|()| raw.check());
        let typed = typed(RawBulkheadSettings::new()).check();
        assert_eq!(text, typed, "{pairs:?}");
        assert_eq!(
            text.err().map(|e| e.to_string()).as_deref(),
            *want,
            "{pairs:?}"
        );
    }
    let err = RawBulkheadSettings::new()
        .pool(usize::MAX)
        .check()
        .unwrap_err();
    assert!(matches!(err, ConfigError::OutOfRange { field: "pool", .. }));
}

#[test]
fn every_error_names_the_keys_an_attribute_points_at() {
    let keys = |pairs: &[(&str, &str)]| from_text(pairs).unwrap_err().keys();
    assert_eq!(
        keys(&[("window", "1s"), ("window_calls", "3")]),
        ["window", "window_calls"]
    );
    assert_eq!(keys(&[("backoff", "2")]), ["backoff"]);
    assert_eq!(keys(&[("open_for_max", "2m")]), ["open_for_max"]);
    assert_eq!(keys(&[("slow_rate", "5")]), ["slow_rate"]);
    assert_eq!(
        keys(&[("window_calls", "5"), ("min_calls", "6")]),
        ["min_calls"]
    );
    let two_rules = keys(&[("trip_p95", "1s"), ("trip_p99", "1s")]);
    assert!(two_rules.contains(&"trip_p95") && two_rules.contains(&"trip_p99"));
}

/// A retry's keys are judged by their table entries: text and typed setters agree, in the
/// table's words.
#[test]
fn retry_settings_are_judged_by_the_table() {
    let text = |pairs: &[(&str, &str)]| {
        let mut raw = RawRetrySettings::new();
        for (k, v) in pairs {
            raw.set_text(k, v)?;
        }
        raw.check()
    };
    let table: &[(&[(&str, &str)], &str)] = &[
        (&[("attempts", "0")], "`attempts` = 0 is out of range: expected a number of attempts from 1 to 10"),
        (&[("attempts", "11")], "`attempts` = 11 is out of range: expected a number of attempts from 1 to 10"),
        (&[("backoff", "0ms")], "`backoff` must be longer than zero, like \"100ms\""),
        (&[("backoff", "2.0")], "bad duration \"2.0\": `2` has no unit; expected a number with a unit (h, m, s, ms, us, ns), like \"800ms\", \"3s\", \"1m30s\" or \"2h\""),
        (&[("backoff", "1s"), ("backoff_max", "500ms")], "`backoff_max` = 500ms is out of range: expected a cap at least `backoff`, the first wait (defaults: `backoff = \"50ms\"`, `backoff_max = \"2s\"`)"),
        (&[("backoff", "10s")], "`backoff` = 10s is out of range: expected a first wait at most `backoff_max`, the cap of the waits, which is `2s` unless given: give `backoff_max` too"),
        (&[("budget", "101")], "`budget` = 101 is out of range: expected a percentage of the name's calls from 0 to 100"),
        (&[("budget_floor", "1001")], "`budget_floor` = 1001 is out of range: expected a number of retries a second from 0 to 1000"),
        (&[("budget_window", "2h")], "`budget_window` = 7200s is out of range: expected a duration longer than zero and at most 1h"),
        (&[("total", "0s")], "`total` must be longer than zero, like \"100ms\""),
        (&[("total", "1s"), ("total", "2s")], "`total` and `total` cannot be used together: give it once"),
        (&[("timeout", "1s")], "unknown setting `timeout` of a retry: expected one of attempts, backoff, backoff_max, budget, budget_floor, budget_window, total"),
    ];
    for (pairs, want) in table {
        assert_eq!(text(pairs).unwrap_err().to_string(), *want, "{pairs:?}");
    }
    let typed = RawRetrySettings::new().attempts(11).check().unwrap_err();
    assert_eq!(typed, text(&[("attempts", "11")]).unwrap_err());
    let typed = RawRetrySettings::new().budget(101).check().unwrap_err();
    assert_eq!(typed, text(&[("budget", "101")]).unwrap_err());
    let ok = text(&[("budget", "0"), ("budget_floor", "0"), ("total", "2s")]).unwrap();
    assert_eq!(ok.budget(), Some((0, 0, 10 * S)));
    assert_eq!(ok.total(), Some(2 * S));
    assert_eq!(
        RawRetrySettings::new()
            .unbudgeted()
            .check()
            .unwrap()
            .budget(),
        None
    );
}

#[test]
fn an_unknown_key_is_refused_with_its_own_kinds_keys_and_the_likely_one() {
    // A review: a bulkhead's unknown key listed the breaker's keys (`pool` not among them).
    let mut bulkhead = RawBulkheadSettings::new();
    let e = bulkhead.set_text("pools", "3").unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "unknown setting `pools` (did you mean `pool`?): expected one of {} (a bulkhead's settings)",
            BULKHEAD_KEYS.join(", ")
        )
    );
    // A breaker's key given to a bulkhead: the bulkhead's keys; one variant for both kinds.
    let e = bulkhead.set_text("timeout", "1s").unwrap_err();
    assert!(matches!(e, ConfigError::UnknownSetting { .. }));
    assert!(e.to_string().contains("max_wait") && !e.to_string().contains("failure_rate"));
    let mut breaker = RawSettings::new();
    let e = breaker.set_text("timout", "1s").unwrap_err().to_string();
    assert!(
        e.starts_with("unknown setting `timout` (did you mean `timeout`?): expected one of"),
        "{e}"
    );
    let mut retry = RawRetrySettings::new();
    let e = retry.set_text("atempts", "3").unwrap_err().to_string();
    assert!(
        e.starts_with("unknown setting `atempts` of a retry (did you mean `attempts`?)"),
        "{e}"
    );
}
