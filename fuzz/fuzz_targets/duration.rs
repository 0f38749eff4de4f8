//! `parse_duration` never panics, and what it accepts round-trips through a canonical form.
#![no_main]

use std::time::Duration;

use fusebox_runtime::parse_duration;
use libfuzzer_sys::fuzz_target;

/// `1h2m3s4ms5us6ns`, largest unit first, zero parts left out.
fn canonical(d: Duration) -> String {
    let mut ns = d.as_nanos();
    if ns == 0 {
        return "0ns".into();
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

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(d) = parse_duration(text) {
        assert_eq!(parse_duration(&canonical(d)), Ok(d), "{text:?}");
    }
});
