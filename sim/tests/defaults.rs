//! Issue 26's table, one test per row: a breaker given only its call's `timeout` (or the design
//! card's line, `trip_p95` and `timeout`), a bulkhead given only its `pool`, on a paused clock
//! in the simulator, must reach each target.

use std::time::Duration;

use fusebox_runtime::State;
use fusebox_sim::replay::cold_start::{self, ColdStartSetup};
use fusebox_sim::replay::defaults::{
    behind_adaptive_bulkhead, behind_bulkhead, behind_pool, card_line, card_line_before,
    noisy_hour, timeout_only,
};
use fusebox_sim::replay::lesson::{self, LessonSetup};
use fusebox_sim::replay::slow::{self, SlowSetup};
use fusebox_sim::replay::slow_trials::{self, SlowTrialsSetup};

const S: Duration = Duration::from_secs(1);
const MS: Duration = Duration::from_millis(1);

#[test]
fn cold_start_all_traffic_back_within_15_s_at_most_one_relapse_under_2_pct_fallback() {
    cold_start_row(timeout_only("address-lookup", 800 * MS));
}

/// The card's line too: before, its trials were held to `trip_p95`, so a provider back cold
/// failed every one of them, probes backed off and open periods doubled: never back.
#[test]
fn cold_start_on_the_card_line_all_traffic_back_within_15_s_at_most_one_relapse() {
    cold_start_row(card_line("address-lookup", 500 * MS, 800 * MS));
}

fn cold_start_row(b: fusebox_runtime::BreakerBuilder) {
    let setup = ColdStartSetup::default();
    let (report, recovery) = cold_start::run_one(&setup, &b).unwrap();
    let ramp = b.config().unwrap().ramp().unwrap();
    let all_back = recovery.expect("closes after the provider is back") + ramp;
    assert!(all_back <= 15 * S, "all traffic back after {all_back:?}");
    // The provider is back (cold) 3 minutes in: one minute of traffic, two down.
    let up = 180 * S;
    let t = &report.breakers[0];
    let relapses = t
        .transitions
        .iter()
        .filter(|(at, s)| *s == State::Open && *at >= up)
        .count();
    assert!(relapses <= 1, "{relapses} relapses: {:?}", t.transitions);
    let after = report.window("back, cold").unwrap().counts.fallback_share();
    assert!(after <= 0.02, "fallback share after: {after}");
    // The probes, not the 30 s open period, found it back.
    let half_open = t
        .transitions
        .iter()
        .find(|(at, s)| *s == State::HalfOpen && *at >= up)
        .unwrap();
    assert!(half_open.0 <= up + 4 * S, "{half_open:?}");
}

#[test]
fn a_provider_that_needs_much_more_traffic_to_warm_is_back_within_seconds() {
    // A real-time review: a provider that warms only after 200 requests (50 a second here)
    // relapsed on its cold answers while ramping back in. First the relapse, on slowness, made
    // the episode a slow one, whose trials must be fast: back after 135 s (800 s for 400
    // requests). Then, the episode kept, each ramp cut the cold answers at 800 ms and relapsed
    // within two seconds, a few dozen requests a cycle: 35 s (67 s for 400). Now the ramp's
    // calls run under the trial timeout, and the relapse after it is the same episode.
    for (warm_after, within, relapses_at_most) in [(60, 10, 0), (200, 20, 1), (400, 30, 2)] {
        let mut setup = ColdStartSetup::default();
        setup.rate = 50.0;
        setup.warm_after = warm_after;
        setup.horizon = 1800 * S;
        let b = timeout_only("address-lookup", 800 * MS);
        let (report, recovery) = cold_start::run_one(&setup, &b).unwrap();
        let back = recovery.expect("closes for good once warm");
        // The card's line, held to its 500 ms by the ramp's end, is back no later.
        let card = card_line("address-lookup", 500 * MS, 800 * MS);
        let card_back = cold_start::run_one(&setup, &card).unwrap().1;
        assert!(
            card_back.is_some_and(|c| c <= within * S),
            "{warm_after} requests to warm, the card's line: {card_back:?}"
        );
        assert!(
            back <= within * S,
            "{warm_after} requests to warm: closed for good {back:?} after the provider was back"
        );
        let up = 180 * S;
        let relapses = report.breakers[0]
            .transitions
            .iter()
            .filter(|(at, s)| *s == State::Open && *at >= up)
            .count();
        assert!(
            relapses <= relapses_at_most,
            "{warm_after} requests to warm: {relapses} relapses"
        );
    }
}

#[test]
fn slow_not_down_trips_within_2_s_and_sheds_no_other_request() {
    let mut setup = SlowSetup::default();
    setup.slow_for = 120 * S;
    let run = slow::run_one(&setup, &card_line("payments", 500 * MS, 30 * S)).unwrap();
    let trip = run.trip_after.expect("the card's line trips");
    assert!(trip <= 2 * S, "tripped after {trip:?}");
    assert_eq!(run.others_shed, 0.0);
    assert!(run.checkout_answered > 0.95, "{}", run.checkout_answered);
}

#[test]
fn slow_not_down_under_a_timeout_alone_trips_within_seconds_on_the_usual_latency() {
    // 8 s answers under a 30 s timeout: under half of it, but a hundred times the usual 80 ms
    // the breaker learned. Half of its last 100 calls must be slow: about 3 s at 20 a second.
    let mut setup = SlowSetup::default();
    setup.slow_for = 120 * S;
    let run = slow::run_one(&setup, &timeout_only("payments", 30 * S)).unwrap();
    let trip = run.trip_after.expect("a timeout alone trips on seed 002");
    assert!(trip <= 3500 * MS, "tripped after {trip:?}");
    assert_eq!(run.others_shed, 0.0);
    let t = run.report.breaker("payments").unwrap();
    let healed = 60 * S + setup.slow_for;
    let closes: Vec<_> = t
        .transitions
        .iter()
        .filter(|(at, s)| *s == State::Closed && *at > 60 * S + trip && *at < healed)
        .collect();
    assert!(closes.is_empty(), "closed while slow: {closes:?}");
}

#[test]
fn slow_under_the_timeout_never_closes_while_slow() {
    let setup = SlowTrialsSetup::default();
    let run = slow_trials::run_one(&setup, &card_line("payments", 500 * MS, 3 * S)).unwrap();
    assert!(run.trip_after.is_some());
    assert_eq!(run.closed_while_slow, 0);
    // Healed, it closes: the probes see it fast again.
    assert!(
        run.recovery.is_some_and(|r| r <= 15 * S),
        "{:?}",
        run.recovery
    );
}

// Semian's row (42 dead instances, steady-state waste) needs three hours of 42 instances:
// `replays.rs` checks it on the replays' shared run, `defaults_reach_every_target`.

#[test]
fn lesson_step_3_opens_within_300_ms() {
    let mut setup = LessonSetup::default();
    setup.step = 10 * S;
    let (_, opened) = lesson::step3(&setup, &timeout_only("price", 300 * MS)).unwrap();
    let opened = opened.expect("opens");
    assert!(opened <= 300 * MS, "opened after {opened:?}");
}

#[test]
fn slow_behind_a_pool_of_5_opens_within_3_s_and_is_back_within_15_s_of_healing() {
    let run = behind_bulkhead(&card_line("payments", 300 * MS, 2 * S)).unwrap();
    let open = run.open_after.expect("opens while slow");
    assert!(open <= 3 * S, "opened after {open:?}");
    let back = run.back_after.expect("closes after healing");
    assert!(back <= 15 * S, "back after {back:?}");
    assert!(run.orders_answered > 0.99, "{}", run.orders_answered);
    // Before issue 26, the same line opened ~14 s in and was back ~50 s after healing.
    let before = behind_bulkhead(&card_line_before(300 * MS, 2 * S)).unwrap();
    assert!(before.open_after.unwrap() > open);
    assert!(before.back_after.unwrap() > back);
}

/// DESIGN.md's line exactly, with no `timeout`: `trip_p95 = "500ms", half_open_pct = 5` behind
/// `pool = 60`. Its rule's bound scales the defaults as a 1 s timeout would; before, it kept
/// today's 30 s window, 30 s open and 30 s half-open (a real-load review: opened up to 10 s
/// into the slowdown, back 46-55 s after healing, where no breaker was back at once).
#[test]
fn the_design_cards_line_without_a_timeout_opens_within_2_s_and_is_back_within_15_s() {
    let card = fusebox_runtime::Breaker::builder("payments")
        .trip_p95(500 * MS)
        .half_open_pct(5);
    let run = behind_pool(&card, 60).unwrap();
    let open = run.open_after.expect("opens while slow");
    assert!(open <= 2 * S, "opened after {open:?}");
    let back = run.back_after.expect("closes after healing");
    assert!(back <= 15 * S, "back after {back:?}");
    // (A pool of 60 over this server's 20 workers does not keep /orders whole: not the
    // breaker's part.)
    eprintln!("the design card's line: opened after {open:?}, back {back:?} after healing");
}

#[test]
fn a_timeout_alone_behind_a_pool_of_5_opens_within_3_s_and_is_back_within_15_s() {
    // Refusals while every slot holds a call past half the timeout count as slow.
    let run = behind_bulkhead(&timeout_only("payments", 2 * S)).unwrap();
    let open = run.open_after.expect("opens while slow");
    assert!(open <= 3 * S, "opened after {open:?}");
    let back = run.back_after.expect("closes after healing");
    assert!(back <= 15 * S, "back after {back:?}");
}

#[test]
fn an_adaptive_limit_in_place_of_the_pool_keeps_orders_whole_and_the_same_bounds() {
    // Issue 26: "a bulkhead given only a pool or limit = adaptive". Before the stall guard the
    // adaptive limit (20) took every database connection in 0.4 s: 93 % of /orders answered.
    for b in [
        card_line("payments", 300 * MS, 2 * S),
        timeout_only("payments", 2 * S),
    ] {
        let run = behind_adaptive_bulkhead(&b).unwrap();
        assert_eq!(run.orders_answered, 1.0, "/orders while slow");
        let open = run.open_after.expect("opens while slow");
        assert!(open <= 3 * S, "opened after {open:?}");
        let back = run.back_after.expect("closes after healing");
        assert!(back <= 15 * S, "back after {back:?}");
    }
}

#[test]
fn healthy_with_noise_for_an_hour_never_opens() {
    for b in [
        timeout_only("search", 500 * MS),
        card_line("search", 300 * MS, 2 * S),
    ] {
        let (report, opened) = noisy_hour(&b, 3600 * S).unwrap();
        assert_eq!(opened, 0, "{:?}", report.breakers[0].transitions);
    }
}
