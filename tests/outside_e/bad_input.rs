//! Issue 7: bad input is a typed error or works, never a panic.

use super::*;

#[tokio::test(start_paused = true)]
async fn the_longest_durations_are_refused_or_work_never_a_panic() {
    type Set = fn(fusebox::config::BreakerBuilder, Duration) -> fusebox::config::BreakerBuilder;
    let setters: [(&str, Set); 8] = [
        ("timeout", |b, d| b.timeout(d)),
        ("half_open_timeout", |b, d| b.half_open_timeout(d)),
        ("open_for", |b, d| b.open_for(d)),
        ("half_open_window", |b, d| b.half_open_window(d)),
        ("alert_after", |b, d| b.alert_after(d)),
        ("window", |b, d| b.window(d)),
        ("trip_p95", |b, d| b.trip_p95(d)),
        ("backoff", |b, d| b.backoff(2.0, d)),
    ];
    for (i, (key, set)) in setters.into_iter().enumerate() {
        for d in [
            Duration::MAX,
            Duration::from_secs(u64::MAX / 2),
            Duration::from_nanos(1),
        ] {
            let builder = set(
                Breaker::builder(format!("oe-huge-{i}-{}", d.as_nanos() % 7))
                    .window_calls(2)
                    .min_calls(2),
                d,
            );
            let Ok(b) = builder.build_detached() else {
                continue; // a typed error is fine
            };
            // Works: open it, wait, call, force for the longest time, read everything.
            for _ in 0..3 {
                let _ = call_for(&b, ms(1), false).await;
            }
            advance(secs(3600)).await;
            let _ = call_for(&b, ms(1), true).await;
            b.force_open_for(Duration::MAX);
            let _ = b.metrics();
            b.force_close_for(Duration::MAX);
            let _ = call_for(&b, Duration::ZERO, true).await;
            let _ = b.metrics();
            b.reset();
            let _ = (key, fusebox::metrics::prometheus());
        }
    }
}

#[tokio::test(start_paused = true)]
async fn text_settings_are_trimmed_bounded_and_refused_in_typed_errors() {
    use fusebox::config::BreakerBuilder;
    use fusebox::settings::ConfigError;
    let b = BreakerBuilder::from_settings("oe-text", [(" timeout ", " 800ms ")]).unwrap();
    assert_eq!(b.config().unwrap().timeout(), Some(ms(800)));
    assert!(matches!(
        BreakerBuilder::from_settings("oe-text", [("window", "2h")]),
        Err(ConfigError::OutOfRange {
            field: "window",
            ..
        })
    ));
    assert!(BreakerBuilder::from_settings("oe-text", [("window_calls", "2000000")]).is_err());
    assert!(BreakerBuilder::from_settings("oe-text", [("min_calls", "4294967295")]).is_err());
    assert!(matches!(
        BreakerBuilder::from_settings("oe-text", [("timout", "1s")]),
        Err(ConfigError::UnknownSetting { .. })
    ));
    assert!(matches!(
        BreakerBuilder::from_settings("oe-text", [("failure_rate", "101")]),
        Err(ConfigError::OutOfRange {
            field: "failure_rate",
            ..
        })
    ));
    let vars = [
        ("OE_TIMEOUT", "250ms"),
        ("OE_URL", "http://example.invalid"),
        ("OE_HALF_OPEN_PCT", " 10 "),
    ]
    .map(|(k, v)| (k.into(), v.into()));
    let b =
        BreakerBuilder::from_vars("oe-env", "OE", vars).expect("an unrelated OE_URL is ignored");
    let cfg = b.config().unwrap();
    assert_eq!(cfg.timeout(), Some(ms(250)));
    assert!(
        Breaker::builder("").build().is_err(),
        "an empty name is a typed error"
    );
    assert!(Bulkhead::builder("oe-pool0").pool(0).build().is_err());
    let e = fusebox::metrics::facade::report_every(Duration::ZERO).await;
    assert!(
        e.is_err(),
        "a zero period is a typed error, not tokio's panic"
    );
}
