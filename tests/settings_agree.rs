//! One table of settings cases (`tests/common/settings_cases.rs`), three entry points: the
//! macros' unit test holds `#[breaker]` / `#[bulkhead]` to it, and this test holds the
//! builder's typed setters, `BreakerBuilder::from_settings` and `BreakerBuilder::from_vars`
//! to it: the same verdict, the same message, and for a valid case the same settings.

mod common;

mod cases {
    include!("common/settings_cases.rs");
}

use std::ffi::OsString;
use std::time::Duration;

use common::DepError;
use fusebox::{breaker, parse_duration, Breaker, BreakerBuilder, BreakerConfig, Bulkhead};
use fusebox::{registry, ConfigError};

use cases::{as_text, BREAKER_CASES, BULKHEAD_CASES, RETRY_CASES};

type Pairs = [(String, String)];

fn verdict(r: Result<BreakerConfig, ConfigError>) -> Result<BreakerConfig, String> {
    r.map_err(|e| e.to_string())
}

fn from_text(pairs: &Pairs) -> Result<BreakerConfig, String> {
    verdict(BreakerBuilder::from_settings("agree", pairs.iter().cloned()).and_then(|b| b.config()))
}

fn from_env(pairs: &Pairs) -> Result<BreakerConfig, String> {
    let vars = pairs.iter().map(|(k, v)| {
        let name = format!("AGREE_{}", k.to_ascii_uppercase());
        (OsString::from(name), OsString::from(v))
    });
    verdict(BreakerBuilder::from_vars("agree", "AGREE", vars).and_then(|b| b.config()))
}

/// The same settings through the typed setters, or `None` where the types cannot say it
/// (a negative count, a number too large for `u8`, a bad duration, half of a pair).
fn typed(pairs: &Pairs) -> Option<BreakerBuilder> {
    let given = |k: &str| {
        pairs
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    let d = |v: &str| parse_duration(v).ok();
    let mut b = Breaker::builder("agree");
    for (k, v) in pairs {
        let v = v.as_str();
        b = match k.as_str() {
            "failure_rate" => b.failure_rate(v.parse().ok()?),
            "window" => b.window(d(v)?),
            "window_calls" => b.window_calls(v.parse().ok()?),
            "min_calls" => b.min_calls(v.parse().ok()?),
            "slow" => b.slow(d(v)?, given("slow_rate")?.parse().ok()?),
            "slow_rate" => given("slow").map(|_| b)?,
            "trip_p50" => b.trip_p50(d(v)?),
            "trip_p90" => b.trip_p90(d(v)?),
            "trip_p95" => b.trip_p95(d(v)?),
            "trip_p99" => b.trip_p99(d(v)?),
            "timeout" => b.timeout(d(v)?),
            "half_open_timeout" => b.half_open_timeout(d(v)?),
            "half_open_slow" => b.half_open_slow(d(v)?),
            "open_for" => b.open_for(d(v)?),
            "backoff" => b.backoff(v.parse().ok()?, d(given("open_for_max")?)?),
            "open_for_max" => given("backoff").map(|_| b)?,
            "half_open_pct" => b.half_open_pct(v.parse().ok()?),
            "half_open_window" => b.half_open_window(d(v)?),
            "half_open_calls" => b.half_open_calls(v.parse().ok()?),
            "alert_after" => b.alert_after(d(v)?),
            "max_keys" => b.max_keys(v.parse().ok()?),
            "probe_every" => b.probe_every(d(v)?),
            "ramp" => b.ramp(d(v)?),
            other => panic!("no typed setter for `{other}`"),
        };
    }
    Some(b)
}

#[test]
fn builder_text_and_environment_give_the_tables_verdict_and_message() {
    // Keys whose valid and invalid values reached the typed setters.
    let (mut typed_ok, mut typed_bad) = (Vec::new(), Vec::new());
    for (source, want) in BREAKER_CASES {
        let pairs = as_text(source);
        let text = from_text(&pairs);
        assert_eq!(
            text.as_ref().err().map(String::as_str),
            *want,
            "text: {source}"
        );
        let env = from_env(&pairs);
        assert_eq!(env, text, "environment: {source}");
        if let Some(b) = typed(&pairs) {
            let built = verdict(b.config());
            assert_eq!(built, text, "builder: {source}");
            let seen = if want.is_none() {
                &mut typed_ok
            } else {
                &mut typed_bad
            };
            seen.extend(pairs.iter().map(|(k, _)| k.clone()));
        }
    }
    for key in fusebox::SETTING_KEYS {
        assert!(
            typed_ok.iter().any(|k| k == key),
            "no valid typed case for `{key}`"
        );
        assert!(
            typed_bad.iter().any(|k| k == key),
            "no invalid typed case for `{key}`"
        );
    }
}

#[test]
fn the_bulkhead_builder_gives_the_tables_verdict_and_message() {
    for (source, want) in BULKHEAD_CASES {
        let mut b = Bulkhead::builder("agree");
        let mut expressible = true;
        for (k, v) in as_text(source) {
            match (k.as_str(), v.parse(), parse_duration(&v)) {
                ("pool", Ok(n), _) => b = b.pool(n),
                ("max_wait", _, Ok(d)) => b = b.max_wait(d),
                ("limit", _, _) if v == "adaptive" => b = b.adaptive(),
                ("limit", _, _) if v == "fixed" => {}
                ("min_pool", Ok(n), _) => b = b.min_pool(n),
                ("max_pool", Ok(n), _) => b = b.max_pool(n),
                _ => expressible = false,
            }
        }
        if expressible {
            let got = b.config().err().map(|e| e.to_string());
            assert_eq!(got.as_deref(), *want, "{source}");
        }
    }
}

/// `Retry::builder`'s typed setters and `Retry::from_settings` give `#[retry]`'s verdict.
#[test]
fn the_retry_builder_and_text_give_the_tables_verdict_and_message() {
    use fusebox::retry::{Backoff, BudgetConfig, Retry};
    for (i, (source, want)) in RETRY_CASES.iter().enumerate() {
        let name = format!("agree-retry-{i}");
        let text = Retry::from_settings(&name, as_text(source)).err();
        assert_eq!(text.map(|e| e.to_string()).as_deref(), *want, "{source}");
        let (mut backoff, mut budget) = (Backoff::default(), BudgetConfig::default());
        let mut b = Retry::builder(&name);
        // A builder's `Backoff` always names its cap: a first wait alone is not expressible.
        let pairs = as_text(source);
        let named = |key: &str| pairs.iter().any(|(k, _)| k == key);
        let mut expressible = !named("backoff") || named("backoff_max");
        for (k, v) in as_text(source) {
            match (k.as_str(), v.parse::<u32>(), parse_duration(&v)) {
                ("attempts", Ok(n), _) => b = b.attempts(n),
                ("backoff", _, Ok(d)) => backoff = Backoff::new(d, backoff.cap()),
                ("backoff_max", _, Ok(d)) => backoff = Backoff::new(backoff.base(), d),
                ("budget", Ok(n), _) if n <= 255 => budget.share_pct = n as u8,
                ("budget_floor", Ok(n), _) => budget.floor_per_s = n,
                ("budget_window", _, Ok(d)) => budget.window = d,
                ("total", _, Ok(d)) => b = b.total(d),
                _ => expressible = false,
            }
        }
        if expressible {
            let got = b.backoff(backoff).budget(budget).build().err();
            assert_eq!(got.map(|e| e.to_string()).as_deref(), *want, "{source}");
        }
    }
}

#[breaker(name = "agree-500ns", timeout = "500ns")]
async fn answers_at_once() -> Result<u8, DepError> {
    Ok(1)
}

#[breaker(
    name = "agree-many",
    window_calls = 50,
    min_calls = 5,
    failure_rate = 10,
    trip_p99 = "2s",
    open_for = "1m",
    backoff = 2.5,
    open_for_max = "10m",
    half_open_calls = 3,
    alert_after = "1h"
)]
async fn many_settings() -> Result<u8, DepError> {
    Ok(2)
}

/// The example the other way round: `"500ns"` was accepted by the attribute and
/// refused by text. Both accept it now, and the breaker runs with exactly that timeout.
#[tokio::test(start_paused = true)]
async fn nanoseconds_are_accepted_by_the_attribute_and_by_text() {
    assert_eq!(answers_at_once().await, Ok(1));
    let from_attribute = registry()
        .breaker("agree-500ns")
        .expect("registered by its first call");
    assert_eq!(
        from_attribute.config().timeout(),
        Some(Duration::from_nanos(500))
    );
    let from_text = BreakerBuilder::from_settings("agree-500ns", [("timeout", "500ns")])
        .and_then(|b| b.config())
        .unwrap();
    assert_eq!(from_attribute.config(), &from_text);
}

/// What the attribute compiled is exactly what the builder builds from the same values.
#[tokio::test(start_paused = true)]
async fn the_attribute_runs_with_what_the_builder_builds() {
    assert_eq!(many_settings().await, Ok(2));
    let generated = registry()
        .breaker("agree-many")
        .expect("registered by its first call");
    let built = Breaker::builder("agree-many")
        .window_calls(50)
        .min_calls(5)
        .failure_rate(10)
        .trip_p99(Duration::from_secs(2))
        .open_for(Duration::from_secs(60))
        .backoff(2.5, Duration::from_secs(600))
        .half_open_calls(3)
        .alert_after(Duration::from_secs(3600))
        .config()
        .unwrap();
    assert_eq!(generated.config(), &built);
}
