//! The attribute entry of the shared settings table: for every key's valid and invalid values,
//! the attribute gives the table's verdict and message, accepts exactly what text accepts (the
//! same settings) and refuses with exactly the message `fusebox-settings` gives for the same
//! value as text.

use fusebox_settings::{RawBulkheadSettings, RawRetrySettings, RawSettings};
use proc_macro2::{Span, TokenStream};

use crate::args::{self, Errors};
use crate::breaker_args::BreakerArgs;
use crate::bulkhead_args::BulkheadArgs;
use crate::retry_args::RetryArgs;

// The table every entry point is held to (the builder and text in `tests/settings_agree.rs`).
include!("../../tests/common/settings_cases.rs");

fn tokens(source: &str) -> TokenStream {
    source.parse().expect("valid tokens")
}

#[test]
fn the_attribute_gives_the_verdict_and_message_of_text() {
    let mut keys_covered = Vec::new();
    for (source, want) in BREAKER_CASES {
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
        let got = errors.messages().into_iter().next();
        assert_eq!(got.as_deref(), *want, "{source}");
        keys_covered.extend(as_text(source).into_iter().map(|(k, _)| k));
    }
    for key in fusebox_settings::BREAKER_KEYS {
        assert!(keys_covered.iter().any(|k| k == key), "no case for `{key}`");
    }
}

#[test]
fn the_bulkhead_attribute_gives_the_verdict_and_message_of_text() {
    for (source, want) in BULKHEAD_CASES {
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
                assert_eq!(attr.settings, s, "{source}");
            }
            Err(e) => assert_eq!(errors.messages(), [e.to_string()], "{source}"),
        }
        let got = errors.messages().into_iter().next();
        assert_eq!(got.as_deref(), *want, "{source}");
    }
}

#[test]
fn the_retry_attribute_gives_the_verdict_and_message_of_text() {
    let mut keys_covered = Vec::new();
    for (source, want) in RETRY_CASES {
        let mut errors = Errors::default();
        let list = args::parse(tokens(source), "retry").expect(source);
        let attr = RetryArgs::from_args(&list, Span::call_site(), &mut errors);
        let mut raw = RawRetrySettings::new();
        let text = as_text(source)
            .iter()
            .try_for_each(|(k, v)| raw.set_text(k, v))
            .and_then(|()| raw.check());
        match text {
            Ok(s) => {
                assert!(errors.is_empty(), "{source}: {:?}", errors.messages());
                assert_eq!(attr.settings, Some(s), "{source}");
            }
            Err(e) => assert_eq!(errors.messages(), [e.to_string()], "{source}"),
        }
        let got = errors.messages().into_iter().next();
        assert_eq!(got.as_deref(), *want, "{source}");
        keys_covered.extend(as_text(source).into_iter().map(|(k, _)| k));
    }
    for key in fusebox_settings::RETRY_KEYS {
        assert!(keys_covered.iter().any(|k| k == key), "no case for `{key}`");
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
