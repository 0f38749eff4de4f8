//! Issue 26: every replay again with the defaults, beside the best tuned configuration. A
//! breaker is given only its call's `timeout` (or the design card's line, `trip_p95` and
//! `timeout`), a bulkhead only its `pool` (or `limit = "adaptive"`); everything else is what
//! fusebox derives (`fusebox_settings::defaults`). Two runs of the issue's own join them: the
//! real run's slow payment dependency behind a pool of 5 (and an adaptive limit), and an hour
//! of a healthy but noisy one.

use std::io;
use std::time::Duration;

use super::{cold_start, lesson, slow, slow_trials, Setup};
use crate::Report;

mod lines;
mod runs;
mod table;

pub use lines::{card_line, card_line_before, timeout_only};
pub use runs::{
    behind_adaptive_bulkhead, behind_bulkhead, behind_pool, noisy_hour, semian_waste, BulkheadRun,
    SLOW_AT, SLOW_FOR,
};
use table::row;
pub use table::{table, DefaultsRow};

/// The runs of the defaults: see [`defaults()`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Defaults {
    /// The table's rows, in the issue's order.
    pub rows: Vec<DefaultsRow>,
    /// The runs behind the rows that have a timeline of their own, labelled.
    pub reports: Vec<(&'static str, Report)>,
}

pub(super) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// The tuned figures the defaults are compared with: the replays' best configurations.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct Tuned {
    /// Cold start, probe + ramp: all traffic back, relapses, fallback share after (0..1).
    pub cold: (Option<Duration>, usize, f64),
    /// Slow, not down, `trip_p95`: time to trip, others shed (0..1).
    pub slow: (Option<Duration>, f64),
    /// Slow under the timeout, whole rule: times closed while slow.
    pub trials_closed: usize,
    /// Semian, tuned: measured waste (0..1).
    pub semian: f64,
    /// Lesson step 3: opened after.
    pub lesson: Option<Duration>,
}

/// Runs every replay with the defaults. `semian_hours` sets where Semian's steady state is
/// measured (from, to; the issue: after the probes have backed off).
///
/// ```no_run
/// use fusebox_sim::replay::{defaults::{defaults, Tuned}, Setup};
/// let d = defaults(&Setup::default(), &Tuned::default()).unwrap();
/// assert!(d.rows.iter().all(|r| r.met));
/// ```
pub fn defaults(setup: &Setup, tuned: &Tuned) -> io::Result<Defaults> {
    let mut rows = Vec::new();
    let mut reports = Vec::new();
    let opt = |d: Option<Duration>| d.map(secs);

    // 1. Cold start: the write-up's 800 ms timeout and nothing else.
    let b = timeout_only("address-lookup", ms(800));
    let (report, recovery) = cold_start::run_one(&setup.cold_start, &b)?;
    let ramp = b
        .config()
        .map_err(io::Error::other)?
        .ramp()
        .unwrap_or_default();
    let all_back = recovery.map(|r| r + ramp);
    let up = cold_start::up_again();
    let relapses = cold_start::relapses(&report, up);
    let fallback = cold_start::fallback_after(&report);
    let given = "timeout = 800ms";
    rows.push(row(
        "cold start",
        "all traffic back after the provider returns (s)",
        "<= 15",
        given,
        opt(all_back),
        opt(tuned.cold.0),
        all_back.is_some_and(|d| d <= Duration::from_secs(15)),
    ));
    rows.push(row(
        "cold start",
        "relapses",
        "<= 1",
        given,
        Some(relapses as f64),
        Some(tuned.cold.1 as f64),
        relapses <= 1,
    ));
    rows.push(row(
        "cold start",
        "fallback share after (%)",
        "<= 2",
        given,
        Some(fallback * 100.0),
        Some(tuned.cold.2 * 100.0),
        fallback <= 0.02,
    ));
    reports.push(("cold start, defaults: timeout = 800ms", report));
    // The card's line on the same outage: its trials pass by answering after failures too.
    let card = card_line("address-lookup", ms(500), ms(800));
    let (_, card_recovery) = cold_start::run_one(&setup.cold_start, &card)?;
    let card_back = card_recovery.map(|r| r + ramp);
    rows.push(row(
        "cold start",
        "all traffic back after the provider returns (s)",
        "<= 15",
        "trip_p95 = 500ms, timeout = 800ms",
        opt(card_back),
        opt(tuned.cold.0),
        card_back.is_some_and(|d| d <= Duration::from_secs(15)),
    ));

    // 2. Slow, not down: the card's line with the write-up's 30 s timeout.
    let run = slow::run_one(
        &setup.slow,
        &card_line("payments", ms(500), Duration::from_secs(30)),
    )?;
    let given = "trip_p95 = 500ms, timeout = 30s";
    rows.push(row(
        "slow, not down",
        "time to trip (s)",
        "<= 2",
        given,
        opt(run.trip_after),
        opt(tuned.slow.0),
        run.trip_after.is_some_and(|d| d <= Duration::from_secs(2)),
    ));
    rows.push(row(
        "slow, not down",
        "other requests shed (%)",
        "0",
        given,
        Some(run.others_shed * 100.0),
        Some(tuned.slow.1 * 100.0),
        run.others_shed == 0.0,
    ));
    reports.push((
        "slow, not down, defaults: trip_p95 = 500ms, timeout = 30s",
        run.report,
    ));
    // The timeout alone: 8 s answers are under half of 30 s, but a hundred times the usual
    // 80 ms, which the breaker learned (`usual_latency`); half of its last 100 calls must be
    // slow, which at 20 calls a second takes longer than the card's 5 %.
    let only = slow::run_one(
        &setup.slow,
        &timeout_only("payments", Duration::from_secs(30)),
    )?;
    rows.push(row(
        "slow, not down",
        "time to trip (s)",
        "<= 2",
        "timeout = 30s",
        opt(only.trip_after),
        opt(tuned.slow.0),
        only.trip_after.is_some_and(|d| d <= Duration::from_secs(2)),
    ));

    // 3. Slow under the timeout: 2 s answers, 3 s timeout.
    let run = slow_trials::run_one(
        &setup.slow_trials,
        &card_line("payments", ms(500), Duration::from_secs(3)),
    )?;
    rows.push(row(
        "slow under the timeout",
        "times closed while slow",
        "never (0)",
        "trip_p95 = 500ms, timeout = 3s",
        Some(run.closed_while_slow as f64),
        Some(tuned.trials_closed as f64),
        run.closed_while_slow == 0,
    ));
    reports.push((
        "slow under the timeout, defaults: trip_p95 = 500ms, timeout = 3s",
        run.report,
    ));
    let only = slow_trials::run_one(
        &setup.slow_trials,
        &timeout_only("payments", Duration::from_secs(3)),
    )?;
    rows.push(row(
        "slow under the timeout",
        "times closed while slow",
        "never (0)",
        "timeout = 3s",
        Some(only.closed_while_slow as f64),
        Some(tuned.trials_closed as f64),
        only.closed_while_slow == 0,
    ));

    // 4. Semian: the client's 250 ms timeout; steady state once the probes backed off.
    let h = Duration::from_secs(3600);
    let waste = semian_waste(
        setup.semian.instances,
        setup.semian.rate_per_instance,
        2 * h,
        3 * h,
    )?;
    rows.push(row(
        "Semian, 42 dead instances, 2 threads",
        "steady-state wasted utilization (%)",
        "<= 4",
        "timeout = 250ms",
        Some(waste * 100.0),
        Some(tuned.semian * 100.0),
        waste <= 0.04,
    ));

    // 5. Lesson step 3: the lesson's 300 ms timeout.
    let (report, opened) = lesson::step3(&setup.lesson, &timeout_only("price", ms(300)))?;
    rows.push(row(
        "lesson, step 3",
        "breaker opened after (s)",
        "<= 0.3",
        "timeout = 300ms",
        opt(opened),
        opt(tuned.lesson),
        opened.is_some_and(|d| d <= ms(300)),
    ));
    reports.push(("lesson step 3, defaults: timeout = 300ms", report));

    // 6. Issue 26's real run, behind a pool of 5.
    let before = behind_bulkhead(&card_line_before(ms(300), Duration::from_secs(2)))?;
    let run = behind_bulkhead(&card_line("payments", ms(300), Duration::from_secs(2)))?;
    let given = "trip_p95 = 300ms, timeout = 2s; pool = 5";
    rows.push(row(
        "slow behind a pool of 5",
        "time to open (s)",
        "<= 3",
        given,
        opt(run.open_after),
        opt(before.open_after),
        run.open_after.is_some_and(|d| d <= Duration::from_secs(3)),
    ));
    rows.push(row(
        "slow behind a pool of 5",
        "closed again after healing (s)",
        "<= 15",
        given,
        opt(run.back_after),
        opt(before.back_after),
        run.back_after.is_some_and(|d| d <= Duration::from_secs(15)),
    ));
    rows.push(row(
        "slow behind a pool of 5",
        "all traffic back after healing (s)",
        "-",
        given,
        opt(run.all_traffic_after),
        opt(before.all_traffic_after),
        true,
    ));
    let only = behind_bulkhead(&timeout_only("payments", Duration::from_secs(2)))?;
    let given = "timeout = 2s; pool = 5";
    let within = |d: Option<Duration>, s: u64| d.is_some_and(|d| d <= Duration::from_secs(s));
    rows.push(row(
        "slow behind a pool of 5",
        "time to open (s)",
        "<= 3",
        given,
        opt(only.open_after),
        opt(before.open_after),
        within(only.open_after, 3),
    ));
    rows.push(row(
        "slow behind a pool of 5",
        "closed again after healing (s)",
        "<= 15",
        given,
        opt(only.back_after),
        opt(before.back_after),
        within(only.back_after, 15),
    ));
    // The same run with `limit = "adaptive"` in place of the pool of 5 (the stall guard).
    let adaptive =
        behind_adaptive_bulkhead(&card_line("payments", ms(300), Duration::from_secs(2)))?;
    let given = "trip_p95 = 300ms, timeout = 2s; limit = adaptive";
    let replay = "slow behind an adaptive limit";
    rows.push(row(
        replay,
        "time to open (s)",
        "<= 3",
        given,
        opt(adaptive.open_after),
        opt(before.open_after),
        within(adaptive.open_after, 3),
    ));
    rows.push(row(
        replay,
        "closed again after healing (s)",
        "<= 15",
        given,
        opt(adaptive.back_after),
        opt(before.back_after),
        within(adaptive.back_after, 15),
    ));
    rows.push(row(
        replay,
        "/orders answered while slow (%)",
        ">= pool of 5's",
        given,
        Some(adaptive.orders_answered * 100.0),
        Some(run.orders_answered * 100.0),
        adaptive.orders_answered >= run.orders_answered,
    ));
    reports.push((
        "behind a pool of 5, before issue 26: the card's line",
        before.report,
    ));
    reports.push(("behind a pool of 5, defaults: the card's line", run.report));

    // 7. An hour of healthy noise.
    for (given, b) in [
        ("timeout = 500ms", timeout_only("search", ms(500))),
        (
            "trip_p95 = 300ms, timeout = 2s",
            card_line("search", ms(300), Duration::from_secs(2)),
        ),
    ] {
        let (_, opened) = noisy_hour(&b, h)?;
        rows.push(row(
            "healthy with noise, 1 hour",
            "false openings",
            "0",
            given,
            Some(opened as f64),
            None,
            opened == 0,
        ));
    }
    Ok(Defaults { rows, reports })
}
