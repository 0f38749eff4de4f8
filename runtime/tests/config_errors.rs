//! Bad input: every invalid setting of the breaker and bulkhead builders, of the duration
//! parser and of text/environment settings is a typed `ConfigError`, never a panic.

use std::ffi::OsString;
use std::time::Duration;

use fusebox_runtime::{
    parse_duration, Breaker, BreakerBuilder, Bulkhead, ConfigError, HalfOpenPolicy, SETTING_KEYS,
};

const S: Duration = Duration::from_secs(1);

/// The field an error names, for the table.
fn field(e: &ConfigError) -> String {
    match e {
        ConfigError::OutOfRange { field, .. } | ConfigError::ZeroDuration { field } => {
            (*field).to_owned()
        }
        ConfigError::Conflict { first, second } => format!("{first}+{second}"),
        ConfigError::BadName { .. } => "name".into(),
        ConfigError::BadDuration { .. } => "duration".into(),
        ConfigError::UnknownSetting { key } => format!("unknown:{key}"),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn every_invalid_breaker_setting_is_a_typed_error_naming_its_field() {
    let b = || Breaker::builder("cfg-table");
    type Case = (&'static str, fn(BreakerBuilder) -> BreakerBuilder);
    let table: &[Case] = &[
        ("failure_rate", |b| b.failure_rate(0)),
        ("failure_rate", |b| b.failure_rate(101)),
        ("window", |b| b.window(Duration::ZERO)),
        ("window_calls", |b| b.window_calls(0)),
        ("window_calls", |b| b.window_calls(1_000_001)),
        ("window+window_calls", |b| b.window(S).window_calls(10)),
        ("min_calls", |b| b.min_calls(0)),
        ("min_calls", |b| b.window_calls(5).min_calls(0)),
        ("min_calls", |b| b.window_calls(5).min_calls(6)),
        ("slow", |b| b.slow(Duration::ZERO, 20)),
        ("slow_rate", |b| b.slow(S, 0)),
        ("slow_rate", |b| b.slow(S, 101)),
        ("slow+trip_pNN", |b| b.slow(S, 20).trip_p95(S)),
        ("trip_pNN+trip_pNN", |b| b.trip_p99(S).trip_p50(S)),
        ("slow", |b| b.trip_p95(Duration::ZERO)),
        ("trip_pNN", |b| b.trip_percentile(0, S)),
        ("trip_pNN", |b| b.trip_percentile(100, S)),
        ("trip_pNN", |b| b.trip_percentile(250, S)),
        ("timeout", |b| b.timeout(Duration::ZERO)),
        ("half_open_timeout", |b| b.half_open_timeout(Duration::ZERO)),
        ("open_for", |b| b.open_for(Duration::ZERO)),
        ("backoff", |b| b.backoff(0.99, 60 * S)),
        ("backoff", |b| b.backoff(-2.0, 60 * S)),
        ("backoff", |b| b.backoff(f64::NAN, 60 * S)),
        ("backoff", |b| b.backoff(f64::INFINITY, 60 * S)),
        ("open_for_max", |b| b.open_for(30 * S).backoff(2.0, 29 * S)),
        ("half_open_pct", |b| b.half_open_pct(0)),
        ("half_open_pct", |b| b.half_open_pct(101)),
        ("half_open_window", |b| b.half_open_window(Duration::ZERO)),
        ("half_open_calls", |b| b.half_open_calls(0)),
        ("half_open_calls+half_open_pct", |b| {
            b.half_open_calls(3).half_open_pct(5)
        }),
        ("half_open_calls+half_open_window", |b| {
            b.half_open_calls(3).half_open_window(S)
        }),
        ("alert_after", |b| b.alert_after(Duration::ZERO)),
    ];
    for (want, set) in table {
        let err = set(b()).config().expect_err(want);
        assert_eq!(field(&err), *want, "{err}");
        // The builders that create a breaker refuse the same way.
        assert_eq!(set(b()).build_detached().unwrap_err(), err);
        assert_eq!(set(b()).build().unwrap_err(), err);
        assert!(!err.to_string().is_empty());
    }
    for name in ["", "tab\there", "new\nline", "\u{7f}"] {
        let err = Breaker::builder(name).config().unwrap_err();
        assert!(
            matches!(err, ConfigError::BadName { .. }),
            "{name:?}: {err}"
        );
    }
}

#[test]
fn the_extremes_of_every_valid_range_are_accepted() {
    let c = Breaker::builder("cfg-extremes")
        .failure_rate(100)
        .window_calls(1_000_000)
        .min_calls(1_000_000)
        .slow(Duration::from_nanos(1), 100)
        .timeout(Duration::MAX)
        .half_open_timeout(Duration::from_nanos(1))
        .open_for(Duration::MAX)
        .backoff(f64::MAX, Duration::MAX)
        .half_open_calls(1_000_000)
        .alert_after(Duration::MAX)
        .config()
        .unwrap();
    assert_eq!(c.half_open(), HalfOpenPolicy::Calls(1_000_000));
    assert_eq!(c.open_period(u32::MAX), Duration::MAX);
    for p in [1, 99] {
        Breaker::builder("cfg-extremes")
            .trip_percentile(p, S)
            .half_open_pct(100)
            .half_open_window(Duration::MAX)
            .config()
            .unwrap();
    }
}

#[test]
fn every_invalid_bulkhead_setting_is_a_typed_error() {
    for pool in [0, usize::MAX] {
        let err = Bulkhead::builder("cfg-bulkhead")
            .pool(pool)
            .build_detached()
            .unwrap_err();
        assert!(
            matches!(err, ConfigError::OutOfRange { field: "pool", .. }),
            "{err}"
        );
    }
    let err = Bulkhead::builder("").pool(1).config().unwrap_err();
    assert!(matches!(err, ConfigError::BadName { .. }));
    let err = Bulkhead::builder("cfg-bulkhead-no-pool")
        .build()
        .unwrap_err();
    assert!(matches!(err, ConfigError::OutOfRange { field: "pool", .. }));
    // Every wait is valid, from failing fast to waiting forever.
    for wait in [Duration::ZERO, Duration::MAX] {
        Bulkhead::builder("cfg-bulkhead")
            .pool(1)
            .max_wait(wait)
            .config()
            .unwrap();
    }
}

#[test]
fn bad_durations_are_typed_errors() {
    assert_eq!(parse_duration("1m30s"), Ok(90 * S));
    for t in [
        "",
        "3",
        "3 s",
        "3sec",
        "-1s",
        "1.5s",
        "30s1m",
        "99999999999999h",
    ] {
        assert_eq!(
            parse_duration(t),
            Err(ConfigError::BadDuration { text: t.into() })
        );
    }
}

#[test]
fn settings_from_text_are_checked_like_the_builder() {
    let ok = BreakerBuilder::from_settings(
        "cfg-text",
        [
            ("timeout", "800ms"),
            ("half_open_timeout", "3s"),
            ("slow", "500ms"),
            ("slow_rate", "20"),
            ("window_calls", "20"),
            ("backoff", "2"),
            ("open_for_max", "1m"),
        ],
    )
    .unwrap()
    .config()
    .unwrap();
    assert_eq!(ok.timeout(), Some(Duration::from_millis(800)));
    assert_eq!(ok.slow().unwrap().rate, 20);
    assert_eq!(ok.open_period(10), 60 * S);

    let table: &[(&[(&str, &str)], &str)] = &[
        (&[("timeout", "800")], "duration"),
        (&[("timeout", "0ms")], "timeout"),
        (&[("failure_rate", "fifty")], "failure_rate"),
        (&[("failure_rate", "300")], "failure_rate"),
        (&[("failure_rate", "0")], "failure_rate"),
        (&[("window_calls", "-1")], "window_calls"),
        (&[("half_open_calls", "")], "half_open_calls"),
        (&[("backoff", "NaN"), ("open_for_max", "1m")], "backoff"),
        (&[("backoff", "2")], "open_for_max"),
        (&[("slow", "1s")], "slow_rate"),
        (&[("slow_rate", "5")], "slow"),
        (&[("timeout", "1s"), ("timeout", "2s")], "timeout+timeout"),
        (&[("windows", "30s")], "unknown:windows"),
        (&[("TIMEOUT", "1s")], "unknown:TIMEOUT"),
        (
            &[("window", "1s"), ("window_calls", "3")],
            "window+window_calls",
        ),
        (&[("half_open_slow", "3s")], "half_open_slow"),
    ];
    for (pairs, want) in table {
        let err = BreakerBuilder::from_settings("cfg-text", pairs.iter().copied()).unwrap_err();
        assert_eq!(field(&err), *want, "{pairs:?}: {err}");
    }
    // Every documented key is understood.
    assert_eq!(SETTING_KEYS.len(), 23);
    for key in SETTING_KEYS {
        let err = BreakerBuilder::from_settings("cfg-text", [(key, "?")]).unwrap_err();
        assert!(!matches!(err, ConfigError::UnknownSetting { .. }), "{key}");
    }
}

#[test]
fn settings_from_environment_variables_use_the_prefix() {
    let vars = |v: &[(&str, &[u8])]| -> Vec<(OsString, OsString)> {
        use std::os::unix::ffi::OsStringExt;
        v.iter()
            .map(|(k, v)| (OsString::from(k), OsString::from_vec(v.to_vec())))
            .collect()
    };
    let b = BreakerBuilder::from_vars(
        "cfg-env",
        "PAY",
        vars(&[
            ("PAY_TIMEOUT", b"800ms"),
            ("PAY_HALF_OPEN_PCT", b"10"),
            ("PAYMENTS_TIMEOUT", b"nonsense"),
            ("HOME", b"/root"),
        ]),
    )
    .unwrap();
    let c = b.config().unwrap();
    assert_eq!(c.timeout(), Some(Duration::from_millis(800)));
    assert!(matches!(
        c.half_open(),
        HalfOpenPolicy::Share { pct: 10, .. }
    ));
    let err =
        BreakerBuilder::from_vars("cfg-env", "PAY", vars(&[("PAY_TIMEOUT", b"\xff")])).unwrap_err();
    assert_eq!(field(&err), "timeout");
    // An unknown `PAY_*` variable is another tool's (or a typo): ignored with a WARN.
    let b = BreakerBuilder::from_vars("cfg-env", "PAY", vars(&[("PAY_TIMOUT", b"1s")])).unwrap();
    assert_eq!(b.config().unwrap().timeout(), None);
}

#[tokio::test(start_paused = true)]
async fn extreme_but_valid_settings_run_without_panicking() {
    let builders = [
        Breaker::builder("cfg-run-a")
            .window(Duration::from_secs(3600))
            .min_calls(1)
            .open_for(Duration::MAX)
            .timeout(Duration::MAX)
            .slow(Duration::MAX, 1)
            .alert_after(Duration::from_nanos(1)),
        Breaker::builder("cfg-run-b")
            .window(Duration::from_nanos(1))
            .min_calls(1)
            .open_for(Duration::from_nanos(1))
            .backoff(f64::MAX, Duration::MAX)
            .half_open_calls(1_000_000),
        Breaker::builder("cfg-run-c")
            .window_calls(1)
            .open_for(Duration::from_nanos(1))
            .half_open_window(Duration::MAX)
            .half_open_timeout(Duration::from_nanos(1))
            .trip_p99(Duration::from_nanos(1)),
    ];
    for b in builders {
        let b = b.build_detached().unwrap();
        for i in 0..50u32 {
            let r: Result<(), _> = b
                .call(async move {
                    tokio::time::sleep(Duration::from_micros(u64::from(i % 3))).await;
                    if i % 2 == 0 {
                        Err("down")
                    } else {
                        Ok(())
                    }
                })
                .await;
            let _ = r;
            tokio::time::advance(Duration::from_millis(u64::from(i))).await;
        }
        let m = b.metrics();
        assert_eq!(m.calls, 50, "{}", m.name);
    }
}
