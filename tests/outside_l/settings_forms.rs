//! Issue 29: settings given outside the code: a bulkhead's text and environment forms, the
//! environment prefix, and a module pattern over default names.

use super::*;

// --- Issue 29: bulkheads have a text and an environment form, with the attribute's verdict --

mod cases {
    #![allow(dead_code)]
    include!("../common/settings_cases.rs");
}

/// Issue 29: "Bulkheads have no text or environment form at all", now they do:
/// `BulkheadBuilder::from_settings` (and `from_vars`, the environment's form) give every case
/// of the shared table the verdict and the words `#[bulkhead]` gives it at compile time.
#[test]
fn a_bulkheads_text_and_environment_forms_give_the_attributes_verdict_and_words() {
    use fusebox::config::BulkheadBuilder;
    use std::ffi::OsString;
    for (source, want) in cases::BULKHEAD_CASES {
        let pairs = cases::as_text(source);
        let text = BulkheadBuilder::from_settings("ol-text-pool", pairs.clone())
            .and_then(|b| b.config())
            .err()
            .map(|e| e.to_string());
        assert_eq!(text.as_deref(), *want, "text: {source}");
        let vars = pairs.iter().map(|(k, v)| {
            (
                OsString::from(format!("OLPOOL_{}", k.to_uppercase())),
                OsString::from(v),
            )
        });
        let env = BulkheadBuilder::from_vars("ol-env-pool", "OLPOOL", vars)
            .and_then(|b| b.config())
            .err()
            .map(|e| e.to_string());
        assert_eq!(env.as_deref(), *want, "environment: {source}");
    }
    let b = BulkheadBuilder::from_settings("ol-text-built", [("pool", "3"), ("max_wait", "20ms")])
        .unwrap()
        .build_detached()
        .unwrap();
    assert_eq!((b.pool(), b.config().max_wait()), (3, ms(20)));
}

/// The environment forms take their prefix with or without its `_`: `"OLT"` and `"OLT_"` both
/// read `OLT_POOL` and `OLT_TIMEOUT`. Written with its separator, the prefix matched nothing,
/// and a bulkhead from the environment failed with "`pool` is missing".
#[test]
fn an_environment_prefix_may_be_written_with_its_underscore() {
    use fusebox::config::{BreakerBuilder, BulkheadBuilder};
    use std::ffi::OsString;
    let vars = || {
        [("OLT_POOL", "3"), ("OLT_TIMEOUT", "2s")]
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
    };
    for prefix in ["OLT", "OLT_"] {
        let pool = BulkheadBuilder::from_vars("ol-prefix-pool", prefix, vars())
            .and_then(|b| b.build_detached())
            .unwrap_or_else(|e| panic!("{prefix}: {e}"));
        assert_eq!(pool.pool(), 3, "{prefix}");
        let config = BreakerBuilder::from_vars("ol-prefix", prefix, vars())
            .and_then(|b| b.config())
            .unwrap();
        assert_eq!(config.timeout(), Some(secs(2)), "{prefix}");
    }
}

// --- Issue 29 x DESIGN's default name: a module pattern reaches default-named guards ------

mod ol_billing {
    use super::ApiError;
    use fusebox::{breaker, bulkhead};

    #[breaker(timeout = "800ms")]
    #[bulkhead(pool = 2)]
    pub async fn charge() -> Result<u32, ApiError> {
        Ok(1)
    }
}

/// DESIGN.md: a breaker's name defaults to "module path + fn name"; issue 29: overrides by
/// name "and by pattern". A pattern over the module (`*::ol_billing::*`) reaches a breaker
/// and a bulkhead whose names were left to their default, before their first call, each
/// setting in force with its source, and every derived setting follows the new timeout.
#[tokio::test(start_paused = true)]
async fn a_module_pattern_overrides_default_named_guards_before_their_first_call() {
    use fusebox::settings::{Overrides, Source};
    let name = registry()
        .breakers()
        .into_iter()
        .map(|b| b.name().to_owned())
        .find(|n| n.ends_with("ol_billing::charge"))
        .expect("listed by its default name before any call");
    let o = Overrides::new()
        .breaker("*::ol_billing::*", [("timeout", "2s")], Source::File)
        .bulkhead("*::ol_billing::*", [("pool", "5")], Source::File);
    let applied = registry().apply_overrides(&o).unwrap();
    assert!(applied.undeclared.is_empty(), "{:?}", applied.undeclared);
    let b = registry().breaker(&name).unwrap();
    let now = b.config_in_force();
    assert_eq!(now.timeout(), Some(secs(2)));
    assert_eq!(
        now.slow().map(|s| s.bound),
        Some(secs(1)),
        "derived from the new timeout"
    );
    let pool = registry()
        .bulkheads()
        .into_iter()
        .find(|p| p.name().ends_with("ol_billing::charge"))
        .expect("the bulkhead, by its default name");
    assert_eq!(pool.pool(), 5);
    let in_force = pool.settings_in_force();
    let p = in_force.iter().find(|s| s.key == "pool").unwrap();
    assert_eq!((p.value.as_str(), p.source), ("5", Source::File));
    assert_eq!(ol_billing::charge().await, Ok(1));
}
