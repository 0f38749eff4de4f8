//! The replays' key figures, asserted with tolerances: CI proves the recovery behaviour of the
//! breakers, not only that the replay program runs. The full replays take about 12 s in a
//! debug build; they run once and every test reads the shared result.

use std::sync::OnceLock;
use std::time::Duration;

use fusebox_runtime::tune;
use fusebox_sim::replay::cold_start::{self, ColdStartSetup};
use fusebox_sim::replay::defaults::DefaultsRow;
use fusebox_sim::replay::{Replays, Setup};

fn replays() -> &'static Replays {
    static R: OnceLock<Replays> = OnceLock::new();
    R.get_or_init(|| Replays::run(&Setup::default()).expect("the replays run"))
}

fn close(actual: f64, expected: f64, tolerance: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "{what}: {actual:.3}, expected {expected} ± {tolerance}"
    );
}

#[test]
fn cold_start_old_config_stays_open_for_hours_new_one_recovers_in_minutes() {
    let c = &replays().cold_start;
    let old = c
        .old_recovery
        .expect("the old configuration recovers within 8 h");
    let new = c.new_recovery.expect("the new configuration recovers");
    assert!(old > Duration::from_secs(3600), "old recovery {old:?}");
    assert!(new < Duration::from_secs(300), "new recovery {new:?}");
    // The old breaker fed the cold provider one lone trial per open period.
    assert!((5..=15).contains(&c.old_trials), "{} trials", c.old_trials);
    let after = c.old.window("back, cold").unwrap().counts;
    assert!(after.fallback_share() > 0.9, "{after:?}");
    // Open periods doubled up to 30 minutes and were capped there.
    let t = &c.old.breakers[0];
    let opens: Vec<Duration> = t
        .transitions
        .iter()
        .filter(|(_, s)| *s == fusebox_runtime::State::Open)
        .map(|(at, _)| *at)
        .collect();
    let last_gap = opens[opens.len() - 1] - opens[opens.len() - 2];
    close(last_gap.as_secs_f64(), 1800.0, 2.0, "last open period");
}

#[test]
fn cold_start_conclusion_holds_whatever_the_warm_up_length() {
    for warm_after in [6, 30, 60] {
        let mut setup = ColdStartSetup::default();
        setup.warm_after = warm_after;
        setup.horizon = Duration::from_secs(4 * 3600);
        let (_, new) = cold_start::run_one(&setup, &cold_start::new_breaker()).unwrap();
        let new = new.expect("new configuration recovers");
        assert!(
            new < Duration::from_secs(300),
            "warm_after {warm_after}: {new:?}"
        );
        if warm_after <= 30 {
            let (_, old) = cold_start::run_one(&setup, &cold_start::old_breaker()).unwrap();
            // Not recovered within 4 h counts as hours too.
            assert!(
                old.is_none_or(|d| d > Duration::from_secs(3600)),
                "warm_after {warm_after}: old {old:?}"
            );
        }
    }
}

#[test]
fn replays_are_deterministic() {
    let setup = ColdStartSetup::default();
    let a = cold_start::run_one(&setup, &cold_start::new_breaker()).unwrap();
    let b = cold_start::run_one(&setup, &cold_start::new_breaker()).unwrap();
    assert_eq!(a.0, b.0);
    assert_eq!(a.1, b.1);
}

#[test]
fn lesson_steps_match_the_lesson() {
    let l = &replays().lesson;
    close(l.step1 * 100.0, 31.0, 2.0, "step 1");
    close(l.step2 * 100.0, 81.0, 2.0, "step 2");
    close(l.step3 * 100.0, 21.0, 2.0, "step 3");
    assert!(l.step4 > 0.95, "step 4 busy share {}", l.step4);
    close(l.step5 * 100.0, 16.0, 2.0, "step 5");
    let opened = l.step3_open_after.expect("the breaker opens");
    assert!(
        opened < Duration::from_millis(500),
        "opened after {opened:?}"
    );
    // 400 calls/s reach the broken price server without a breaker, about 0.3/s with one.
    close(l.price_calls_per_s.0, 400.0, 1.0, "step 2 price calls/s");
    assert!(
        l.price_calls_per_s.1 < 0.5,
        "step 3: {}",
        l.price_calls_per_s.1
    );
    assert_eq!(l.pool, 60);
}

#[test]
fn lesson_figures_agree_with_tune() {
    let l = &replays().lesson;
    // The lesson's 3.3 s counts the stuck statements against all 200 workers; the simulation
    // also has views and status holding 22.5 of them, which tune predicts just as well.
    let stuck = l
        .step4_all_stuck
        .expect("every worker gets stuck")
        .as_secs_f64();
    let predicted = tune::time_to_exhaust(200.0 - 22.5, 60.0, Duration::from_secs(5)).unwrap();
    close(stuck, predicted.as_secs_f64(), 0.2, "all stuck after");
    let lesson = tune::time_to_exhaust(200.0, 60.0, Duration::from_secs(5)).unwrap();
    assert!(stuck < lesson.as_secs_f64() && stuck > 2.5, "{stuck}");
    let (started, refused) = l.step5_started_refused_per_s;
    close(
        started,
        tune::pool_throughput(60, Duration::from_secs(5)),
        0.3,
        "started/s",
    );
    close(refused, 48.0, 0.5, "refused/s");
    let held = tune::workers_held(400.0, Duration::from_millis(300)) + 2.5 + 40.0;
    close(l.step2 * 200.0, held, 2.0, "step 2 busy workers");
}

#[test]
fn slow_dependency_trips_only_the_latency_breaker() {
    let s = &replays().slow;
    assert_eq!(s.error_only.trip_after, None, "zero errors: never trips");
    assert!(
        s.error_only.utilization > 0.95,
        "{}",
        s.error_only.utilization
    );
    assert!(
        s.error_only.others_shed > 0.5,
        "unrelated requests fail too"
    );
    assert!(s.error_only.checkout_answered < 0.05);
    let trip = s.p95.trip_after.expect("trip_p95 opens");
    // The replay guide's figure: opens in 0.75 s.
    assert!(trip < Duration::from_millis(1_250), "{trip:?}");
    assert!(s.p95.utilization < 0.10, "{}", s.p95.utilization);
    assert!(s.p95.others_shed < 0.01, "{}", s.p95.others_shed);
    assert!(
        s.p95.checkout_answered > 0.95,
        "{}",
        s.p95.checkout_answered
    );
    // Healthy again: it closes.
    let t = s.p95.report.breaker("payments").unwrap();
    assert_eq!(
        t.transitions.last().unwrap().1,
        fusebox_runtime::State::Closed
    );
}

#[test]
fn semian_wasted_utilization_matches_tune() {
    let m = &replays().semian;
    close(m.before.predicted * 100.0, 262.5, 1e-9, "equation, untuned");
    close(m.after.predicted * 100.0, 3.5, 1e-9, "equation, tuned");
    // Tuned: what the simulation measures on 2 threads is what the equation predicts.
    close(
        m.after.measured * 100.0,
        m.after.predicted * 100.0,
        0.3,
        "tuned, measured",
    );
    let load = tune::probe_load(42, Duration::from_millis(50), Duration::from_secs(30), 2);
    close(m.after.measured, load, 0.001, "tuned vs probe_load");
    // Untuned: a demand above what 2 threads have; they saturate and requests are shed.
    let load = tune::probe_load(42, Duration::from_millis(250), Duration::from_secs(2), 2);
    close(m.before.demand, load, 0.05, "untuned demand vs probe_load");
    assert!(m.before.demand > 2.0 && m.before.demand <= m.before.predicted);
    assert!(m.before.measured > 0.95, "{}", m.before.measured);
    assert!(m.before.shed > 0.5, "{}", m.before.shed);
    assert!(m.after.shed < 0.1, "{}", m.after.shed);
}

#[test]
fn summary_json_has_the_issue_keys() {
    let summary = replays().summary();
    let v: serde_json::Value = serde_json::from_str(&summary.to_json()).expect("valid JSON");
    let num = |path: &str| {
        let (group, key) = path.split_once('.').unwrap();
        v[group][key]
            .as_f64()
            .unwrap_or_else(|| panic!("{path} is not a number: {}", v[group][key]))
    };
    close(
        num("cold_start.old_recovery_s"),
        summary.cold_old_recovery_s.unwrap(),
        0.01,
        "json",
    );
    assert!(num("cold_start.new_recovery_s") < 300.0);
    // Issue 17: the adaptive pool within 2 points of the tuned one, back within 30 s.
    for case in ["lesson", "semian"] {
        let fixed = num(&format!("adaptive.{case}_fixed_others_pct"));
        let adaptive = num(&format!("adaptive.{case}_adaptive_others_pct"));
        assert!(adaptive >= fixed - 2.0, "{case}: {adaptive} vs {fixed}");
        assert!(
            num(&format!("adaptive.{case}_recovery_s")) <= 30.0,
            "{case}"
        );
        assert!(
            num(&format!("adaptive.{case}_limit_low"))
                < num(&format!("adaptive.{case}_limit_before"))
        );
    }
    for (i, key) in [
        "step1_pct",
        "step2_pct",
        "step3_pct",
        "step4_pct",
        "step5_pct",
    ]
    .iter()
    .enumerate()
    {
        close(
            num(&format!("lesson.{key}")),
            summary.lesson_pct[i],
            0.01,
            key,
        );
    }
    assert!(num("lesson.step4_all_stuck_s") > 2.5);
    assert!(v["slow"]["error_only_trip_s"].is_null());
    close(num("slow.p95_trip_s"), 0.75, 0.5, "p95_trip_s");
    close(num("semian.before_pct"), 262.5, 1e-9, "before_pct");
    close(num("semian.after_pct"), 3.5, 1e-9, "after_pct");
    close(num("semian.sim_after_pct"), 3.5, 0.3, "sim_after_pct");
    // Slow under the timeout: failures-only trials close while slow, the whole rule never.
    assert!(num("slow_under_timeout.failures_only_closed_while_slow") >= 3.0);
    assert_eq!(num("slow_under_timeout.whole_rule_closed_while_slow"), 0.0);
    assert!(num("slow_under_timeout.whole_rule_recovery_s") <= 30.0);
    assert_eq!(num("slow_under_timeout.probing_closed_while_slow"), 0.0);
    // One row per peer policy, fusebox's first.
    let peers = v["cold_start_peers"]
        .as_array()
        .expect("an array of policies");
    assert_eq!(peers.len(), 8);
    assert!(peers[0]["policy"].as_str().unwrap().starts_with("fusebox"));
    assert!(peers[0]["recovery_s"].as_f64().unwrap() <= 120.0);
    // Issue 22: probing and a ramp follow the provider back within 15 s, at most one
    // relapse, fewer fallbacks than the new configuration; its peers row agrees.
    assert!(num("cold_start.follow_recovery_s") <= 15.0);
    assert!(num("cold_start.follow_full_traffic_s") <= 15.0);
    assert!(num("cold_start.follow_relapses") <= 1.0);
    assert!(num("cold_start.follow_fallback_after_pct") < num("cold_start.new_fallback_after_pct"));
    assert!(peers[1]["policy"].as_str().unwrap().contains("probe"));
    close(
        peers[1]["recovery_s"].as_f64().unwrap(),
        num("cold_start.follow_recovery_s"),
        1e-9,
        "follow row",
    );
}

#[test]
fn timelines_are_written_as_svg() {
    let dir = std::env::temp_dir().join(format!("fusebox-sim-test-{}", std::process::id()));
    let paths = replays().write_svgs(&dir).unwrap();
    assert_eq!(paths.len(), 9);
    for p in &paths {
        let svg = std::fs::read_to_string(p).unwrap();
        assert!(svg.starts_with("<svg"), "{}", p.display());
        assert!(svg.contains("breaker not closed"), "{}", p.display());
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn defaults_reach_every_target() {
    // Issue 26: each replay with the defaults (the timeout alone, or the card's line).
    let rows = &replays().defaults.rows;
    // The one miss the README and the replay guide name: seed 002's slowdown under a timeout alone trips in about
    // 3 s, not 2 (half of the last 100 calls slow, at 20 calls a second); it used to never trip.
    let alone = |r: &&DefaultsRow| r.replay == "slow, not down" && r.given == "timeout = 30s";
    let missed: Vec<_> = rows.iter().filter(|r| !r.met && !alone(r)).collect();
    assert!(missed.is_empty(), "{missed:#?}");
    let trip = rows.iter().find(alone).and_then(|r| r.defaults);
    assert!(
        trip.is_some_and(|t| t <= 3.5),
        "timeout alone on seed 002: {trip:?}"
    );
    let semian = rows
        .iter()
        .find(|r| r.replay.starts_with("Semian"))
        .unwrap();
    let waste = semian.defaults.unwrap();
    assert!(waste <= 4.0 && waste > 0.0, "wasted {waste} %");
    assert!(
        waste <= semian.tuned.unwrap(),
        "no worse than the tuned {:?}",
        semian.tuned
    );
}
