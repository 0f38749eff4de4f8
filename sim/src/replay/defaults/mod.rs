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
use table::Rows;
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

/// A figure in seconds, `None` when the event never happened.
fn secs(d: Option<Duration>) -> Option<f64> {
    d.map(|d| d.as_secs_f64())
}

/// Whether the event happened within `s` seconds.
fn within(d: Option<Duration>, s: u64) -> bool {
    d.is_some_and(|d| d <= Duration::from_secs(s))
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
    let mut d = Defaults {
        rows: Vec::new(),
        reports: Vec::new(),
    };
    cold_start_rows(setup, tuned, &mut d)?;
    slow_rows(setup, tuned, &mut d)?;
    slow_trials_rows(setup, tuned, &mut d)?;
    semian_rows(setup, tuned, &mut d)?;
    lesson_rows(setup, tuned, &mut d)?;
    behind_pool_rows(&mut d)?;
    noise_rows(&mut d)?;
    Ok(d)
}

/// Replay 1, cold start: the write-up's 800 ms timeout and nothing else, then the card's
/// line, whose trials pass by answering after failures too.
fn cold_start_rows(setup: &Setup, tuned: &Tuned, d: &mut Defaults) -> io::Result<()> {
    let b = timeout_only("address-lookup", ms(800));
    let (report, recovery) = cold_start::run_one(&setup.cold_start, &b)?;
    let ramp = b
        .config()
        .map_err(io::Error::other)?
        .ramp()
        .unwrap_or_default();
    let all_back = recovery.map(|r| r + ramp);
    let relapses = cold_start::relapses(&report, cold_start::up_again());
    let fallback = cold_start::fallback_after(&report);
    let back = "all traffic back after the provider returns (s)";
    let mut rows = Rows::new(&mut d.rows, "cold start", "timeout = 800ms");
    let tuned_back = secs(tuned.cold.0);
    rows.push(
        back,
        "<= 15",
        secs(all_back),
        tuned_back,
        within(all_back, 15),
    );
    let (r, t) = (relapses as f64, tuned.cold.1 as f64);
    rows.push("relapses", "<= 1", Some(r), Some(t), relapses <= 1);
    let (f, t) = (fallback * 100.0, tuned.cold.2 * 100.0);
    rows.push(
        "fallback share after (%)",
        "<= 2",
        Some(f),
        Some(t),
        fallback <= 0.02,
    );
    d.reports
        .push(("cold start, defaults: timeout = 800ms", report));

    let card = card_line("address-lookup", ms(500), ms(800));
    let (_, card_recovery) = cold_start::run_one(&setup.cold_start, &card)?;
    let card_back = card_recovery.map(|r| r + ramp);
    let mut rows = Rows::new(
        &mut d.rows,
        "cold start",
        "trip_p95 = 500ms, timeout = 800ms",
    );
    rows.push(
        back,
        "<= 15",
        secs(card_back),
        tuned_back,
        within(card_back, 15),
    );
    Ok(())
}

/// Replay 2, slow, not down: the card's line with the write-up's 30 s timeout, then the
/// timeout alone.
fn slow_rows(setup: &Setup, tuned: &Tuned, d: &mut Defaults) -> io::Result<()> {
    let thirty = Duration::from_secs(30);
    let run = slow::run_one(&setup.slow, &card_line("payments", ms(500), thirty))?;
    let given = "trip_p95 = 500ms, timeout = 30s";
    let mut rows = Rows::new(&mut d.rows, "slow, not down", given);
    let trip = "time to trip (s)";
    let tuned_trip = secs(tuned.slow.0);
    rows.push(
        trip,
        "<= 2",
        secs(run.trip_after),
        tuned_trip,
        within(run.trip_after, 2),
    );
    let (shed, t) = (run.others_shed * 100.0, tuned.slow.1 * 100.0);
    rows.push(
        "other requests shed (%)",
        "0",
        Some(shed),
        Some(t),
        shed == 0.0,
    );
    d.reports.push((
        "slow, not down, defaults: trip_p95 = 500ms, timeout = 30s",
        run.report,
    ));
    // 8 s answers are under half of 30 s, but a hundred times the usual 80 ms, which the
    // breaker learned (`usual_latency`); half of its last 100 calls must be slow, which at 20
    // calls a second takes longer than the card's 5 %.
    let only = slow::run_one(&setup.slow, &timeout_only("payments", thirty))?;
    let mut rows = Rows::new(&mut d.rows, "slow, not down", "timeout = 30s");
    rows.push(
        trip,
        "<= 2",
        secs(only.trip_after),
        tuned_trip,
        within(only.trip_after, 2),
    );
    Ok(())
}

/// Replay 3, slow under the timeout: 2 s answers, 3 s timeout; the card's line, then the
/// timeout alone.
fn slow_trials_rows(setup: &Setup, tuned: &Tuned, d: &mut Defaults) -> io::Result<()> {
    let three = Duration::from_secs(3);
    let closed = "times closed while slow";
    let t = Some(tuned.trials_closed as f64);
    let given = "trip_p95 = 500ms, timeout = 3s";
    let run = slow_trials::run_one(&setup.slow_trials, &card_line("payments", ms(500), three))?;
    let n = run.closed_while_slow;
    let mut rows = Rows::new(&mut d.rows, "slow under the timeout", given);
    rows.push(closed, "never (0)", Some(n as f64), t, n == 0);
    d.reports.push((
        "slow under the timeout, defaults: trip_p95 = 500ms, timeout = 3s",
        run.report,
    ));
    let only = slow_trials::run_one(&setup.slow_trials, &timeout_only("payments", three))?;
    let n = only.closed_while_slow;
    let mut rows = Rows::new(&mut d.rows, "slow under the timeout", "timeout = 3s");
    rows.push(closed, "never (0)", Some(n as f64), t, n == 0);
    Ok(())
}

/// Replay 4, Semian's: the client's 250 ms timeout; steady state once the probes backed off
/// (hours 2 to 3).
fn semian_rows(setup: &Setup, tuned: &Tuned, d: &mut Defaults) -> io::Result<()> {
    let h = Duration::from_secs(3600);
    let s = &setup.semian;
    let waste = semian_waste(s.instances, s.rate_per_instance, 2 * h, 3 * h)?;
    let replay = "Semian, 42 dead instances, 2 threads";
    let mut rows = Rows::new(&mut d.rows, replay, "timeout = 250ms");
    let (w, t) = (waste * 100.0, tuned.semian * 100.0);
    let measure = "steady-state wasted utilization (%)";
    rows.push(measure, "<= 4", Some(w), Some(t), waste <= 0.04);
    Ok(())
}

/// Replay 5, the lesson's step 3: the lesson's 300 ms timeout.
fn lesson_rows(setup: &Setup, tuned: &Tuned, d: &mut Defaults) -> io::Result<()> {
    let (report, opened) = lesson::step3(&setup.lesson, &timeout_only("price", ms(300)))?;
    let mut rows = Rows::new(&mut d.rows, "lesson, step 3", "timeout = 300ms");
    let met = opened.is_some_and(|d| d <= ms(300));
    rows.push(
        "breaker opened after (s)",
        "<= 0.3",
        secs(opened),
        secs(tuned.lesson),
        met,
    );
    d.reports
        .push(("lesson step 3, defaults: timeout = 300ms", report));
    Ok(())
}

/// Replay 6, issue 26's real run, behind a pool of 5: the card's line (compared with its behaviour
/// before issue 26), the timeout alone, and the card's line behind `limit = "adaptive"`.
fn behind_pool_rows(d: &mut Defaults) -> io::Result<()> {
    let two = Duration::from_secs(2);
    let before = behind_bulkhead(&card_line_before(ms(300), two))?;
    let run = behind_bulkhead(&card_line("payments", ms(300), two))?;
    let only = behind_bulkhead(&timeout_only("payments", two))?;
    let adaptive = behind_adaptive_bulkhead(&card_line("payments", ms(300), two))?;
    let (open, closed) = ("time to open (s)", "closed again after healing (s)");
    let (was_open, was_back) = (secs(before.open_after), secs(before.back_after));
    for (given, r, all_traffic) in [
        ("trip_p95 = 300ms, timeout = 2s; pool = 5", &run, true),
        ("timeout = 2s; pool = 5", &only, false),
    ] {
        let mut rows = Rows::new(&mut d.rows, "slow behind a pool of 5", given);
        rows.push(
            open,
            "<= 3",
            secs(r.open_after),
            was_open,
            within(r.open_after, 3),
        );
        rows.push(
            closed,
            "<= 15",
            secs(r.back_after),
            was_back,
            within(r.back_after, 15),
        );
        if all_traffic {
            let all = "all traffic back after healing (s)";
            let was = secs(before.all_traffic_after);
            rows.push(all, "-", secs(r.all_traffic_after), was, true);
        }
    }
    let given = "trip_p95 = 300ms, timeout = 2s; limit = adaptive";
    let mut rows = Rows::new(&mut d.rows, "slow behind an adaptive limit", given);
    let a = &adaptive;
    rows.push(
        open,
        "<= 3",
        secs(a.open_after),
        was_open,
        within(a.open_after, 3),
    );
    rows.push(
        closed,
        "<= 15",
        secs(a.back_after),
        was_back,
        within(a.back_after, 15),
    );
    let (answered, pool) = (a.orders_answered * 100.0, run.orders_answered * 100.0);
    let met = a.orders_answered >= run.orders_answered;
    let measure = "/orders answered while slow (%)";
    rows.push(measure, ">= pool of 5's", Some(answered), Some(pool), met);
    d.reports.push((
        "behind a pool of 5, before issue 26: the card's line",
        before.report,
    ));
    d.reports
        .push(("behind a pool of 5, defaults: the card's line", run.report));
    Ok(())
}

/// Replay 7, an hour of healthy noise, with the timeout alone and with the card's line.
fn noise_rows(d: &mut Defaults) -> io::Result<()> {
    for (given, b) in [
        ("timeout = 500ms", timeout_only("search", ms(500))),
        (
            "trip_p95 = 300ms, timeout = 2s",
            card_line("search", ms(300), Duration::from_secs(2)),
        ),
    ] {
        let (_, opened) = noisy_hour(&b, Duration::from_secs(3600))?;
        let mut rows = Rows::new(&mut d.rows, "healthy with noise, 1 hour", given);
        rows.push(
            "false openings",
            "0",
            Some(opened as f64),
            None,
            opened == 0,
        );
    }
    Ok(())
}
