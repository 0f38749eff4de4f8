//! Issue 29: the simulator takes the same overrides. A candidate configuration, given as
//! settings pairs by breaker name, replayed against a recorded incident gives other figures
//! than the live one, and the live run is the write-up's run.

use std::time::Duration;

use fusebox_sim::replay::candidate::{candidates, table, CandidateError};
use fusebox_sim::replay::{semian, slow, Setup};
use fusebox_sim::{OverrideError, Overrides};

fn small() -> Setup {
    let mut setup = Setup::default();
    setup.semian.instances = 12;
    setup.semian.cycles = 2;
    setup.slow.scale = 0.2;
    setup.slow.slow_for = Duration::from_secs(120);
    setup
}

#[test]
fn semians_tuned_settings_as_overrides_shed_far_less_than_the_live_ones_on_seed_003() {
    let setup = small();
    let o = Overrides::parse("redis.open_for=30s, redis.half_open_timeout=50ms").unwrap();
    let runs = candidates(&setup, &o).unwrap();
    assert_eq!(runs.len(), 1);
    let r = &runs[0];
    assert_eq!((r.replay, r.breaker), ("4 semian", "redis"));
    // The live run is the write-up's untuned run, figure for figure.
    let before = semian::run_one(&setup.semian, &semian::before_breaker()).unwrap();
    let after = semian::run_one(&setup.semian, &semian::after_breaker()).unwrap();
    let pct = |x: f64| format!("{:.1} %", x * 100.0);
    assert_eq!(r.figures[0].live, pct(before.shed));
    // The candidate is the tuned configuration, reached by overrides alone.
    assert_eq!(r.figures[0].candidate, pct(after.shed));
    assert_ne!(r.figures[0].live, r.figures[0].candidate);
    assert!(
        before.shed > 0.5 && after.shed < 0.1,
        "{} vs {}",
        before.shed,
        after.shed
    );
    let text = table(&runs);
    assert!(
        text.contains("redis") && text.contains("open_for=30s"),
        "{text}"
    );
}

#[test]
fn a_latency_rule_as_an_override_opens_the_slow_payments_breaker_of_seed_002() {
    let setup = small();
    let o = Overrides::parse("payments.trip_p95=500ms").unwrap();
    let runs = candidates(&setup, &o).unwrap();
    let r = &runs[0];
    assert_eq!(r.breaker, "payments");
    let opened = &r.figures[0];
    assert_eq!(opened.what, "opened after the slowdown");
    assert_eq!(opened.live, "never");
    assert_ne!(opened.candidate, "never");
    // The same as the replay's own p95 breaker.
    let p95 = slow::run_one(&setup.slow, &slow::p95_breaker()).unwrap();
    let trip = p95.trip_after.unwrap();
    assert_eq!(opened.candidate, format!("{:.1} s", trip.as_secs_f64()));
}

#[test]
fn a_bad_override_names_the_breaker_the_key_and_the_value_and_runs_nothing() {
    let setup = small();
    let e = candidates(&setup, &Overrides::parse("redis.failure_rate=120").unwrap()).unwrap_err();
    let text = e.to_string();
    assert!(matches!(
        e,
        CandidateError::Override(OverrideError::Refused { .. })
    ));
    assert!(
        text.contains("redis") && text.contains("failure_rate") && text.contains("120"),
        "{text}"
    );
    let e = candidates(&setup, &Overrides::parse("reddis.open_for=30s").unwrap()).unwrap_err();
    assert!(
        e.to_string().contains("reddis") && e.to_string().contains("redis"),
        "{e}"
    );
    let e = candidates(&setup, &Overrides::parse("redis.opn_for=30s").unwrap()).unwrap_err();
    assert!(e.to_string().contains("opn_for"), "{e}");
    assert!(matches!(
        Overrides::parse("open_for=30s"),
        Err(OverrideError::Malformed { .. })
    ));
}

#[test]
fn the_write_ups_fix_as_overrides_recovers_the_cold_start_of_seed_000_in_minutes() {
    // The half-open policy switches from one trial to a share of traffic: the override takes
    // the code's `half_open_calls` away.
    let o = Overrides::parse(
        "address-lookup.half_open_pct=5 address-lookup.half_open_window=30s \
         address-lookup.half_open_timeout=4s address-lookup.open_for=60s address-lookup.backoff=1",
    )
    .unwrap();
    let runs = candidates(&Setup::default(), &o).unwrap();
    let recovery = &runs[0].figures[0];
    assert_eq!(recovery.what, "recovery after the provider was back");
    assert!(recovery.live.starts_with("3h"), "{recovery:?}");
    assert!(recovery.candidate.starts_with("0h 0"), "{recovery:?}");
}
