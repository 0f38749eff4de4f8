//! The contract's paths: every name DESIGN.md gives (and the root paths of releases before 0.1)
//! compiles, and `fusebox::tune` answers the seed's arithmetic.

use super::*;

#[test]
fn tune_answers_the_seeds_arithmetic() {
    assert_eq!(
        fusebox::tune::pool_size(20.0, Duration::from_secs(2), 1.5),
        60
    );
    let held = fusebox::tune::workers_held(400.0, ms(300));
    assert!((held - 120.0).abs() < 1e-9);
}

/// Every path DESIGN.md names, and the root paths of releases before 0.1, still compile.
#[test]
fn the_contracts_names_and_the_older_root_paths_compile() {
    use fusebox::config::{BreakerBuilder, BulkheadBuilder};
    let b: BreakerBuilder = fusebox::Breaker::builder("d-paths");
    let _: fusebox::Breaker = b.build_detached().unwrap();
    let _: BulkheadBuilder = fusebox::Bulkhead::builder("d-paths-pool");
    let _: fusebox::metrics::Metrics = fusebox::metrics();
    let _: &fusebox::registry::Registry = fusebox::registry();
    for s in [
        State::Closed,
        State::Open,
        State::HalfOpen,
        State::ForcedOpen,
        State::ForcedClosed,
    ] {
        let _ = s;
    }
    // Older root paths.
    let _: fusebox::BreakerBuilder = fusebox::Breaker::builder("d-paths-old");
    let _: Option<fusebox::BreakerMetrics> = None;
    let _: Option<fusebox::BulkheadMetrics> = None;
    let _: Option<fusebox::Metrics> = None;
    let _: Option<fusebox::Completion<u8, u8>> = None;
    let _: &fusebox::Registry = fusebox::registry();
    let _ = fusebox::export::prometheus();
    let _ = fusebox::SETTING_KEYS.len();
    let _ = fusebox::parse_duration("1s");
}
