//! The time window's turnover and lanes, read back through its totals.

use super::*;

fn s(failed: bool) -> Sample {
    Sample {
        failed,
        slow: false,
        latency: Duration::from_millis(1),
    }
}

#[test]
fn every_lane_counts_in_the_totals_and_expires_with_its_slot() {
    let w = TimeWindow::new(Duration::from_nanos(100));
    w.record(5, s(true));
    // Threads 0 and 1 count in different lanes, thread 2 in thread 0's.
    for thread in 0..3 {
        w.record_success(|| 7, thread);
    }
    assert!(
        LANES > 1 && w.store.lanes[0].0[0].load(Relaxed) == 1,
        "a lane of its own"
    );
    let t = w.totals(9);
    assert_eq!((t.calls, t.failures), (4, 1));
    assert_eq!(w.totals_view(9).calls, 4);
    // The three fast calls are the first bucket's: derived from every lane's calls.
    assert_eq!(w.latency_view(9).0[0], 3);
    // A whole window later every lane of the old slot is empty.
    w.record_success(|| 1_005, 1);
    let t = w.totals(1_005);
    assert_eq!((t.calls, t.failures), (1, 0));
    assert_eq!(w.latency_view(1_005).0[0], 1);
}

#[test]
fn a_turnover_expires_the_old_slot() {
    let w = TimeWindow::new(Duration::from_nanos(100));
    w.record(5, s(true));
    w.record(95, s(false));
    w.record(8, s(false));
    w.record(105, s(true));
    let t = w.totals(105);
    assert_eq!(t.calls, 2, "slot 9's call and the new one");
}
