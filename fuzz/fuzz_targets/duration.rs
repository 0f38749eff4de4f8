//! `parse_duration` never panics, and what it accepts round-trips through a canonical form.
#![no_main]

use std::time::Duration;

use fusebox_runtime::parse_duration;
use libfuzzer_sys::fuzz_target;

/// `1h2m3s4ms5us`, largest unit first, zero parts left out.
fn canonical(d: Duration) -> String {
    let mut us = d.as_micros();
    if us == 0 {
        return "0us".into();
    }
    let mut out = String::new();
    for (unit, size) in [
        ("h", 3_600_000_000u128),
        ("m", 60_000_000),
        ("s", 1_000_000),
        ("ms", 1_000),
        ("us", 1),
    ] {
        if us >= size {
            out.push_str(&format!("{}{unit}", us / size));
            us %= size;
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(d) = parse_duration(text) {
        assert_eq!(d.subsec_nanos() % 1_000, 0, "only whole microseconds");
        assert_eq!(parse_duration(&canonical(d)), Ok(d), "{text:?}");
    }
});
