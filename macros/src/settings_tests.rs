//! The attribute entry of the settings table: for every key's valid and invalid values, the
//! attribute accepts exactly what text accepts (the same settings) and refuses with exactly
//! the message `fusebox-settings` gives for the same value as text.

use fusebox_settings::{RawBulkheadSettings, RawSettings};
use proc_macro2::{Span, TokenStream};

use crate::args::{self, Errors};
use crate::breaker_args::BreakerArgs;
use crate::bulkhead_args::BulkheadArgs;

/// Attribute arguments, each as a settings file would also hold it.
const BREAKER: &[&str] = &[
    "failure_rate = 1",
    "failure_rate = 100",
    "failure_rate = 0",
    "failure_rate = 101",
    "failure_rate = 99999999999999999999999",
    "window = \"1ns\"",
    "window = \"0s\"",
    "window = \"30 s\"",
    "window_calls = 1",
    "window_calls = 1000000",
    "window_calls = 1_000_000",
    "window_calls = 0",
    "window_calls = 2000000",
    "window_calls = -1",
    "window = \"1s\", window_calls = 3",
    "window_calls = 3, window = \"1s\"",
    "min_calls = 1",
    "min_calls = 4294967295",
    "min_calls = 4294967296",
    "min_calls = 0",
    "window_calls = 5, min_calls = 5",
    "window_calls = 5, min_calls = 6",
    "slow = \"1ns\", slow_rate = 100",
    "slow = \"0ms\", slow_rate = 20",
    "slow = \"1s\", slow_rate = 0",
    "slow = \"1s\", slow_rate = 101",
    "slow = \"1s\"",
    "slow_rate = 20",
    "trip_p50 = \"1s\"",
    "trip_p90 = \"1s\"",
    "trip_p95 = \"500ms\"",
    "trip_p99 = \"2s\"",
    "trip_p95 = \"0s\"",
    "trip_p95 = \"1s\", trip_p99 = \"2s\"",
    "slow = \"1s\", slow_rate = 20, trip_p95 = \"1s\"",
    "timeout = \"500ns\"",
    "timeout = \"0us\"",
    "timeout = \"800 millis\"",
    "timeout = \"1s1m\"",
    "half_open_timeout = \"3s\"",
    "half_open_timeout = \"0s\"",
    "open_for = \"1ns\"",
    "open_for = \"0s\"",
    "backoff = 1, open_for_max = \"30s\"",
    "backoff = 2.5, open_for_max = \"1m\"",
    "backoff = 0.5, open_for_max = \"1m\"",
    "backoff = -2.0, open_for_max = \"1m\"",
    "backoff = 2, open_for_max = \"29s\"",
    "open_for = \"1m\", backoff = 2, open_for_max = \"30s\"",
    "backoff = 2, open_for_max = \"0s\"",
    "backoff = 2.0",
    "open_for_max = \"60s\"",
    "half_open_pct = 100",
    "half_open_pct = 0",
    "half_open_window = \"1h\"",
    "half_open_window = \"0s\"",
    "half_open_calls = 4294967295",
    "half_open_calls = 0",
    "half_open_pct = 5, half_open_calls = 3",
    "half_open_window = \"1s\", half_open_calls = 3",
    "alert_after = \"5m\"",
    "alert_after = \"0m\"",
];

/// `key = value, ...` as `(key, text)` pairs: string literals lose their quotes.
fn as_text(source: &str) -> Vec<(String, String)> {
    source
        .split(", ")
        .map(|pair| {
            let (k, v) = pair.split_once(" = ").expect("key = value");
            let v = v.trim_matches('"').replace('_', "");
            (k.to_owned(), v)
        })
        .collect()
}

fn tokens(source: &str) -> TokenStream {
    source.parse().expect("valid tokens")
}

#[test]
fn the_attribute_gives_the_verdict_and_message_of_text() {
    let mut keys_covered = Vec::new();
    for source in BREAKER {
        let mut errors = Errors::default();
        let list = args::parse(tokens(source), "breaker").expect(source);
        let attr = BreakerArgs::from_args(&list, &mut errors);
        let text = RawSettings::from_text(as_text(source));
        match text {
            Ok(settings) => {
                assert!(errors.is_empty(), "{source}: {:?}", errors.messages());
                assert_eq!(attr.settings, settings, "{source}");
            }
            Err(e) => assert_eq!(errors.messages(), [e.to_string()], "{source}"),
        }
        keys_covered.extend(as_text(source).into_iter().map(|(k, _)| k));
    }
    for key in fusebox_settings::BREAKER_KEYS {
        assert!(keys_covered.iter().any(|k| k == key), "no case for `{key}`");
    }
}

#[test]
fn the_bulkhead_attribute_gives_the_verdict_and_message_of_text() {
    for source in [
        "pool = 1",
        "pool = 536870911",
        "pool = 536870912",
        "pool = 0",
        "pool = 60, max_wait = \"0ms\"",
        "pool = 60, max_wait = \"5ns\"",
        "pool = 60, max_wait = \"5 ms\"",
        "max_wait = \"5ms\"",
    ] {
        let mut errors = Errors::default();
        let list = args::parse(tokens(source), "bulkhead").expect(source);
        let attr = BulkheadArgs::from_args(&list, Span::call_site(), &mut errors);
        let mut raw = RawBulkheadSettings::new();
        let text = as_text(source)
            .iter()
            .try_for_each(|(k, v)| raw.set_text(k, v))
            .and_then(|()| raw.check());
        match text {
            Ok(s) => {
                assert!(errors.is_empty(), "{source}: {:?}", errors.messages());
                assert_eq!((attr.pool, attr.max_wait), (s.pool(), s.max_wait()));
            }
            Err(e) => assert_eq!(errors.messages(), [e.to_string()], "{source}"),
        }
    }
}

#[test]
fn a_literal_of_the_wrong_shape_says_what_the_key_takes() {
    for (source, want) in [
        ("open_for = 30", "`open_for` takes a duration string with a unit: write `open_for = \"30ms\"` or `\"30s\"`"),
        ("failure_rate = \"50\"", "`failure_rate` takes a percentage from 1 to 100"),
        ("window_calls = LIMIT", "`window_calls` takes a number of calls from 1 to 1000000"),
        ("backoff = \"2\"", "`backoff` takes a finite factor of at least 1.0, like `backoff = 2.0`"),
        ("timeout = TIMEOUT", "`timeout` takes a duration string, like `timeout = \"800ms\"`"),
    ] {
        let mut errors = Errors::default();
        let list = args::parse(tokens(source), "breaker").expect(source);
        BreakerArgs::from_args(&list, &mut errors);
        assert_eq!(errors.messages(), [want], "{source}");
    }
}
