//! The `fuzz/` target `settings` on stable (issue 18 item 9): settings as text (`key=value`
//! lines) never panic, and what is accepted builds a breaker.

use fusebox_runtime::{BreakerBuilder, SETTING_KEYS};
use proptest::prelude::*;

fn check(text: &str) -> Result<(), TestCaseError> {
    let pairs = text.lines().filter_map(|l| l.split_once('='));
    if let Ok(b) = BreakerBuilder::from_settings("fuzz", pairs) {
        let breaker = b.build_detached();
        prop_assert!(breaker.is_ok(), "accepted settings build: {:?}", text);
        let _ = breaker.unwrap().metrics();
    }
    Ok(())
}

/// Lines of real keys with values that are sometimes valid.
fn settings_text() -> impl Strategy<Value = String> {
    let key = prop::sample::select(SETTING_KEYS.to_vec());
    let value = prop_oneof![
        "[0-9]{1,12}",
        "[0-9]{1,6}(ms|s|m|h|us)",
        "[ \t]*[0-9]{1,4}(ms|s)[ \t]*",
        "[0-9]{1,3}\\.[0-9]{1,3}",
        any::<String>(),
    ];
    prop::collection::vec((key, value), 0..8).prop_map(|lines| {
        lines
            .into_iter()
            .map(|(k, v)| format!("{k}={v}\n"))
            .collect::<String>()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn fuzz_settings_any_text(text in any::<String>()) {
        check(&text)?;
    }

    #[test]
    fn fuzz_settings_real_keys(text in settings_text()) {
        check(&text)?;
    }
}
