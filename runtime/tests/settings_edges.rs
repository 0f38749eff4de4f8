//! Issue 18 item 8, the settings side: whitespace around text values, unrelated `PREFIX_*`
//! variables, bounded windows and counts, and a zero reporting period, each a typed answer.

use std::ffi::OsString;
use std::time::Duration;

use fusebox_runtime::retry::Retry;
use fusebox_runtime::{Breaker, BreakerBuilder, BulkheadBuilder, ConfigError};

fn vars(list: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    list.iter()
        .map(|(k, v)| ((*k).into(), (*v).into()))
        .collect()
}

#[test]
fn whitespace_around_keys_and_values_is_trimmed() {
    let b = BreakerBuilder::from_settings(
        "edges-trim",
        [(" timeout ", " 800ms"), ("failure_rate", "25 \n")],
    )
    .unwrap();
    let c = b.config().unwrap();
    assert_eq!(c.timeout(), Some(Duration::from_millis(800)));
    assert_eq!(c.failure_rate(), 25);
    let b = BreakerBuilder::from_vars("edges-trim", "EDGES", vars(&[("EDGES_TIMEOUT", "\t1s ")]));
    assert_eq!(
        b.unwrap().config().unwrap().timeout(),
        Some(Duration::from_secs(1))
    );
}

#[test]
fn a_bulkheads_and_a_retrys_text_is_trimmed_as_a_breakers_is() {
    // A review: `pool = " 5 "` and `DB_POOL="5 "` were out of range while a breaker's and a
    // retry's values were trimmed.
    let b = BulkheadBuilder::from_settings(
        "edges-trim-pool",
        [(" pool ", " 5 "), ("max_wait", "10ms\n")],
    )
    .unwrap();
    let c = b.config().unwrap();
    assert_eq!((c.pool(), c.max_wait()), (5, Duration::from_millis(10)));
    let b = BulkheadBuilder::from_vars("edges-trim-pool", "DB", vars(&[("DB_POOL", "5 ")]));
    assert_eq!(b.unwrap().config().unwrap().pool(), 5);
    let again = BulkheadBuilder::from_settings("edges-trim-pool", [("pool", "5"), ("pool ", "6")]);
    assert!(
        matches!(again, Err(ConfigError::Conflict { .. })),
        "{again:?}"
    );
    let r = Retry::from_settings("edges-trim-retry", [(" attempts", "4\t"), ("total", " 2s")]);
    assert_eq!(r.unwrap().attempts(), 4);
}

#[test]
fn unknown_prefixed_variables_are_ignored_not_fatal() {
    let env = vars(&[
        ("PAYMENTS_URL", "https://pay.example"),
        ("PAYMENTS_TIMEOUT", "800ms"),
        ("PAYMENTS_API_KEY", "not ours"),
        ("OTHER_TIMEOUT", "zzz"),
    ]);
    let b = BreakerBuilder::from_vars("edges-env", "PAYMENTS", env).unwrap();
    assert_eq!(
        b.config().unwrap().timeout(),
        Some(Duration::from_millis(800))
    );
    // A known key with a bad value is still an error.
    let bad =
        BreakerBuilder::from_vars("edges-env", "PAYMENTS", vars(&[("PAYMENTS_TIMEOUT", "8")]));
    assert!(matches!(bad, Err(ConfigError::BadDuration { .. })));
    // Text settings (a file's section) still refuse an unknown key: that one is a typo.
    let typo = BreakerBuilder::from_settings("edges-env", [("timeuot", "1s")]);
    assert!(matches!(typo, Err(ConfigError::UnknownSetting { .. })));
}

#[test]
fn windows_and_counts_are_bounded_so_u32_counters_cannot_wrap() {
    let hour = Duration::from_secs(3600);
    let b = || Breaker::builder("edges-bounds");
    assert!(b().window(hour).config().is_ok());
    let cases = [
        ("window", b().window(hour + Duration::from_secs(1)).config()),
        ("min_calls", b().min_calls(1_000_001).config()),
        ("half_open_calls", b().half_open_calls(u32::MAX).config()),
    ];
    for (want, got) in cases {
        match got {
            Err(ConfigError::OutOfRange { field, .. }) => assert_eq!(field, want),
            other => panic!("{want}: {other:?}"),
        }
    }
    let text = BreakerBuilder::from_settings("edges-bounds", [("window", "2h")]);
    assert!(matches!(
        text,
        Err(ConfigError::OutOfRange {
            field: "window",
            ..
        })
    ));
}

#[cfg(feature = "metrics")]
#[tokio::test(start_paused = true)]
async fn a_zero_reporting_period_is_a_typed_error_not_a_panic() {
    let r = fusebox_runtime::export::metrics::report_every(Duration::ZERO).await;
    assert_eq!(
        r,
        Err(ConfigError::ZeroDuration {
            field: "report_every"
        })
    );
}
