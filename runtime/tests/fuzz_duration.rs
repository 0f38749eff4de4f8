//! The `fuzz/` target `duration` on stable, as a property test (issue 18 item 9): the same
//! property runs in every `cargo test`, not only under nightly `cargo fuzz`.
//! `parse_duration` never panics, and what it accepts round-trips through a canonical form.

use std::time::Duration;

use fusebox_runtime::parse_duration;
use proptest::prelude::*;

/// `1h2m3s4ms5us`, largest unit first, zero parts left out (`ns` only when there are any).
fn canonical(d: Duration) -> String {
    let mut ns = d.as_nanos();
    if ns == 0 {
        return "0us".into();
    }
    let mut out = String::new();
    for (unit, size) in [
        ("h", 3_600_000_000_000u128),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
        ("ns", 1),
    ] {
        if ns >= size {
            out.push_str(&format!("{}{unit}", ns / size));
            ns %= size;
        }
    }
    out
}

fn check(text: &str) -> Result<(), TestCaseError> {
    if let Ok(d) = parse_duration(text) {
        prop_assert_eq!(parse_duration(&canonical(d)), Ok(d), "{:?}", text);
    }
    Ok(())
}

/// Text that is close to a duration: digits and units, sometimes in the wrong order.
fn near_durations() -> impl Strategy<Value = String> {
    let part = ("[0-9]{0,21}", "(h|m|s|ms|us|ns|H|sec|µs|)");
    prop::collection::vec(part, 1..6).prop_map(|parts| {
        parts
            .into_iter()
            .map(|(n, u)| format!("{n}{u}"))
            .collect::<String>()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn fuzz_duration_any_text(text in any::<String>()) {
        check(&text)?;
    }

    #[test]
    fn fuzz_duration_near_durations(text in near_durations()) {
        check(&text)?;
    }

    #[test]
    fn fuzz_duration_canonical_forms_round_trip(nanos in any::<u64>()) {
        // Whole microseconds are accepted by every version of the parser.
        let d = Duration::from_micros(nanos / 1_000);
        prop_assert_eq!(parse_duration(&canonical(d)), Ok(d));
    }
}
