//! The cold-start replay through `#[breaker]`-annotated functions gives exactly the figures of
//! the builder-based replay: the attributes configure the same breakers and run the same code.

#[path = "../sim/examples/replay/annotated.rs"]
mod annotated;

use std::time::Duration;

use fusebox_sim::replay::cold_start::{self, ColdStartSetup};

#[test]
fn annotated_cold_start_replay_matches_the_builder_one() {
    let setup = ColdStartSetup::default();
    let a = annotated::cold_start(&setup).unwrap();
    assert_eq!(
        a.conflicts, 0,
        "attribute settings differ from the builder's"
    );
    let (_, old) = cold_start::run_one(&setup, &cold_start::old_breaker()).unwrap();
    let (_, new) = cold_start::run_one(&setup, &cold_start::new_breaker()).unwrap();
    assert_eq!(a.recovery, (old, new));
    assert!(a.recovery.0.unwrap() > Duration::from_secs(3600));
    assert!(a.recovery.1.unwrap() < Duration::from_secs(300));
    // Issue 22: probe_every and ramp through the attribute run as the builder's do.
    let (_, follow) = cold_start::run_one(&setup, &cold_start::follow_breaker()).unwrap();
    assert_eq!(a.follow, follow);
    assert!(a.follow.unwrap() <= Duration::from_secs(15));
}
