//! The retry replay's claims, at full scale: a budget keeps retries from piling onto a slow
//! dependency, and retries still lift a flaky one's success share.

use fusebox_sim::replay::retry::{retry, RetrySetup};

#[test]
fn retries_on_a_budget_add_little_load_to_a_slow_dependency_and_lift_a_flaky_one() {
    let r = retry(&RetrySetup::default()).unwrap();
    let (none, naive, fb) = (&r.none, &r.naive, &r.fusebox);
    println!(
        "first 5 s load per request: none {:.2}, naive {:.2}, fusebox {:.2}; trip after {:?} / {:?} / {:?}",
        none.load_first_5s, naive.load_first_5s, fb.load_first_5s,
        none.trip_after, naive.trip_after, fb.trip_after
    );
    println!(
        "slow load per request: none {:.2}, naive {:.2}, fusebox {:.2}; util {:.2} {:.2} {:.2}; flaky ok {:.4} -> {:.4} at {:.3} calls each",
        none.load_per_request, naive.load_per_request, fb.load_per_request,
        none.utilization, naive.utilization, fb.utilization,
        r.flaky_ok_without, r.flaky_ok_with, r.flaky_load_with
    );
    // A hand-written loop multiplies the load while the breaker has not opened yet.
    assert!(naive.load_first_5s > 2.0 * none.load_first_5s);
    // fusebox's retries stay within the budget: 20 % of the calls plus 1 a second (5 % of 20).
    assert!(fb.load_per_request <= none.load_per_request * 1.25 + 0.01);
    // In the first 5 s the window still holds 5 s of healthy calls: 20 % of 200 calls plus
    // 10 is at most 50 retries over the 100 requests of those 5 s.
    assert!(fb.load_first_5s <= 1.5, "{}", fb.load_first_5s);
    assert!(fb.load_first_5s < naive.load_first_5s / 2.0);
    // The breaker trips as fast with retries as without.
    let (t0, t1) = (none.trip_after.unwrap(), fb.trip_after.unwrap());
    assert!(
        t1 <= t0 + std::time::Duration::from_millis(500),
        "{t0:?} vs {t1:?}"
    );
    assert!(fb.others_shed <= none.others_shed + 0.001);
    // Flaky: 5 % failures; three more attempts lift the success share past 99.7 %.
    assert!(r.flaky_ok_without < 0.97);
    assert!(r.flaky_ok_with >= 0.997, "{}", r.flaky_ok_with);
    assert!(r.flaky_load_with < 1.1);
}
