//! The earlier rounds' issues 5, 6, 13 and 14 as a user reads them, through the facade only:
//! `fusebox::tune`'s formulas at the issue's figures and at the edges of their inputs (zero,
//! huge, not a number: an answer, never a panic or a hang).

use std::time::Duration;

use fusebox::{tune, Breaker};

mod common;
use common::{ms, secs};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn tune_gives_issue_5s_figures() {
    // Semian's equation: 42 instances, 2 threads, 0.25 s probe, 2 s open: 263 %.
    let before = tune::extra_utilization(42, ms(250), secs(2), 2);
    assert!(close(before, 2.625), "{before}");
    // 50 ms probe, 30 s open: about 4 %.
    let after = tune::extra_utilization(42, ms(50), secs(30), 2);
    assert!((after * 100.0 - 3.5).abs() < 0.01, "{after}");
    // Pool size is rate × latency × spare, rounded up.
    assert_eq!(tune::pool_size(20.0, secs(2), 1.5), 60);
    assert_eq!(tune::pool_size(10.0, ms(1_050), 1.0), 11);
    assert_eq!(tune::pool_size(3.0, ms(100), 1.0), 1);
    // Little's law and the lesson's 3.3 s.
    assert!(close(tune::workers_held(60.0, secs(5)), 300.0));
    let t = tune::time_to_exhaust(200.0, 60.0, secs(5)).unwrap();
    assert!((t.as_secs_f64() - 10.0 / 3.0).abs() < 1e-6, "{t:?}");
    assert!(close(tune::pool_throughput(60, secs(5)), 12.0));
}

#[test]
fn extra_utilization_follows_its_formula_over_a_grid() {
    // extra = failing × probe_timeout / (open_for × threads), for every combination.
    for failing in [0usize, 1, 3, 42, 10_000] {
        for probe in [ms(1), ms(50), ms(250), secs(3)] {
            for open in [ms(10), secs(2), secs(30), secs(3600)] {
                for threads in [1usize, 2, 16] {
                    let got = tune::extra_utilization(failing, probe, open, threads);
                    let want = failing as f64 * probe.as_secs_f64()
                        / (open.as_secs_f64() * threads as f64);
                    assert!(close(got, want), "{failing} {probe:?} {open:?} {threads}");
                    // probe_load counts the probe inside the cycle, so it never exceeds it.
                    let load = tune::probe_load(failing, probe, open, threads);
                    assert!(load <= got + 1e-12, "{load} > {got}");
                }
            }
        }
    }
}

#[test]
fn tune_answers_edge_inputs_without_panicking() {
    // Zero: nothing to hold still needs one slot; no failing circuits waste nothing.
    assert_eq!(tune::pool_size(0.0, secs(1), 1.5), 1);
    assert_eq!(tune::pool_size(10.0, Duration::ZERO, 1.5), 1);
    assert_eq!(tune::pool_size(10.0, secs(1), 0.0), 1);
    assert_eq!(tune::extra_utilization(0, ms(250), secs(2), 2), 0.0);
    assert_eq!(tune::probe_load(0, ms(250), secs(2), 2), 0.0);
    assert_eq!(tune::workers_held(0.0, secs(5)), 0.0);
    assert_eq!(tune::time_to_exhaust(200.0, 0.0, secs(5)), None);
    assert_eq!(tune::time_to_exhaust(0.0, 0.0, secs(5)), None);
    // Negative and not-a-number rates are no demand, not a panic.
    assert_eq!(tune::pool_size(-5.0, secs(1), 1.5), 1);
    assert_eq!(tune::pool_size(f64::NAN, secs(1), 1.5), 1);
    assert_eq!(tune::pool_size(10.0, secs(1), f64::NAN), 1);
    assert_eq!(tune::time_to_exhaust(200.0, -1.0, secs(5)), None);
    assert_eq!(tune::time_to_exhaust(200.0, f64::NAN, secs(5)), None);
    assert_eq!(tune::time_to_exhaust(f64::NAN, 60.0, secs(5)), None);
    // No free worker: exhausted at once.
    assert_eq!(
        tune::time_to_exhaust(0.0, 60.0, secs(5)),
        Some(Duration::ZERO)
    );
    // Huge: a demand too large to count is the largest pool, never a pool of one.
    assert_eq!(tune::pool_size(1e300, secs(1), 1.5), usize::MAX);
    assert_eq!(tune::pool_size(1e300, Duration::MAX, 1e300), usize::MAX);
    assert_eq!(tune::pool_size(f64::INFINITY, secs(1), 1.5), usize::MAX);
    assert!(tune::workers_held(f64::MAX, Duration::MAX).is_infinite());
    let huge = tune::extra_utilization(usize::MAX, Duration::MAX, ms(1), 1);
    assert!(huge.is_finite() && huge > 1e30, "{huge}");
    assert_eq!(
        tune::time_to_exhaust(200.0, f64::INFINITY, secs(5)),
        Some(Duration::ZERO)
    );
    assert_eq!(tune::time_to_exhaust(f64::INFINITY, 60.0, secs(5)), None);
    // The longest wait: exhaustion comes before the wait ends, so it fits in a `Duration`.
    let far = tune::time_to_exhaust(1.5e9, 1e-10, Duration::MAX).unwrap();
    assert!((far.as_secs_f64() / 1.5e19 - 1.0).abs() < 1e-9, "{far:?}");
    // An open period of zero or no thread: the demand has no bound.
    assert!(tune::extra_utilization(1, ms(10), Duration::ZERO, 1).is_infinite());
    assert!(tune::probe_load(1, Duration::ZERO, Duration::ZERO, 1).is_infinite());
    assert!(tune::pool_throughput(10, Duration::ZERO).is_infinite());
    assert_eq!(
        tune::extra_utilization(42, ms(250), secs(2), 0),
        tune::extra_utilization(42, ms(250), secs(2), 1)
    );
}

#[test]
fn trial_times_follow_the_open_periods_up_to_the_horizon() {
    // The write-up's old configuration, doubling from 30 s to 30 min: 0:30, 1:30, 3:30, ...
    let old = Breaker::builder("tune-old")
        .open_for(secs(30))
        .backoff(2.0, secs(1800))
        .config()
        .unwrap();
    let times = tune::trial_times(&old, secs(3 * 3600));
    let mins: Vec<u64> = times.iter().map(|t| t.as_secs() / 60).collect();
    assert_eq!(mins, [0, 1, 3, 7, 15, 31, 61, 91, 121, 151]);
    assert!(times.windows(2).all(|w| w[0] < w[1]));
    // A horizon shorter than the first open period sends no trial.
    assert!(tune::trial_times(&old, secs(29)).is_empty());
    assert!(tune::trial_times(&old, Duration::ZERO).is_empty());
    // Exactly at the horizon counts.
    assert_eq!(tune::trial_times(&old, secs(30)), [secs(30)]);
}

#[test]
fn trial_times_with_an_endless_horizon_returns_a_bounded_list() {
    // `Duration::MAX` reads as "forever": the answer must come back, bounded, not exhaust
    // memory or overflow the sum of open periods.
    let fixed = Breaker::builder("tune-forever")
        .open_for(secs(1))
        .config()
        .unwrap();
    let times = tune::trial_times(&fixed, Duration::MAX);
    assert_eq!(times.len(), tune::MAX_TRIAL_TIMES);
    assert_eq!(times[0], secs(1));
    assert_eq!(*times.last().unwrap(), secs(tune::MAX_TRIAL_TIMES as u64));
    let doubling = Breaker::builder("tune-forever-doubling")
        .open_for(secs(1))
        .backoff(10.0, secs(3600))
        .config()
        .unwrap();
    let times = tune::trial_times(&doubling, Duration::MAX);
    assert_eq!(times.len(), tune::MAX_TRIAL_TIMES);
    assert!(times.windows(2).all(|w| w[0] < w[1]));
}
