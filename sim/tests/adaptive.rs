//! Issue 17's replay: the adaptive limit, not told the pool, holds the other routes' share of
//! the workers within 2 points of the tuned fixed pool while the dependency hangs, and is back
//! to its limit within 30 s of the dependency's recovery.

use std::time::Duration;

use fusebox_sim::replay::adaptive::{adaptive, AdaptiveSetup, PoolRun};

fn show(label: &str, r: &PoolRun) {
    println!(
        "{label}: others' share {:.1} %, others answered {:.1} %, limit {} -> low {} -> back after {:?}",
        r.others_share * 100.0,
        r.others_answered * 100.0,
        r.limit_before,
        r.limit_low,
        r.recovered_after
    );
}

#[test]
fn the_adaptive_limit_holds_the_others_share_and_recovers() {
    let mut setup = AdaptiveSetup::default();
    setup.scale = 0.5; // 100 workers: the lesson's shares, half the events
    let a = adaptive(&setup).unwrap();
    show("lesson fixed", &a.lesson_fixed);
    show("lesson adaptive", &a.lesson_adaptive);
    show("semian fixed", &a.semian_fixed);
    show("semian adaptive", &a.semian_adaptive);
    for (fixed, adaptive) in [
        (&a.lesson_fixed, &a.lesson_adaptive),
        (&a.semian_fixed, &a.semian_adaptive),
    ] {
        assert!(
            adaptive.others_share >= fixed.others_share - 0.02,
            "within 2 points: {} vs {}",
            adaptive.others_share,
            fixed.others_share
        );
        assert!(adaptive.others_answered >= fixed.others_answered - 0.02);
        let back = adaptive.recovered_after.expect("recovered");
        assert!(back <= Duration::from_secs(30), "recovered in {back:?}");
        assert!(adaptive.limit_low < adaptive.limit_before);
    }
}
