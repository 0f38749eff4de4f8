//! Settings as text (`key=value` lines): never a panic, and what is accepted builds.
#![no_main]

use fusebox_runtime::BreakerBuilder;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let pairs = text.lines().filter_map(|l| l.split_once('='));
    if let Ok(b) = BreakerBuilder::from_settings("fuzz", pairs) {
        let breaker = b.build_detached().expect("accepted settings build");
        let _ = breaker.metrics();
    }
});
