//! The project's four incident write-ups (and issue 15's slow-under-the-timeout case), replayed in virtual time against the real breakers
//! and bulkheads: what `cargo run --release --example replay` prints.
//!
//! Each replay has its own module with a setup (defaults: the write-up's figures) and a result
//! holding the reports; [`Replays`] runs all four, [`Summary`] is the comparison table and
//! `summary.json`.
//!
//! ```no_run
//! use fusebox_sim::replay::{Replays, Setup};
//! let replays = Replays::run(&Setup::default()).unwrap();
//! let summary = replays.summary();
//! println!("{}", summary.table());
//! std::fs::write("summary.json", summary.to_json()).unwrap();
//! ```

pub mod adaptive;
pub mod candidate;
pub mod cold_start;
pub mod defaults;
mod format;
pub mod lesson;
pub mod peers;
pub mod retry;
pub mod semian;
pub mod slow;
pub mod slow_trials;
mod summary;

pub use defaults::DefaultsRow;
pub use summary::{PeerRow, Summary};

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::svg::{self, Panel};

/// The setups of all four replays; the defaults are the write-ups' figures.
///
/// ```
/// use fusebox_sim::replay::Setup;
/// let mut setup = Setup::default();
/// setup.lesson.scale = 0.1; // a tenth of the lesson's server: the same shares, faster
/// assert_eq!(setup.semian.instances, 42);
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Setup {
    /// Replay 1.
    pub cold_start: cold_start::ColdStartSetup,
    /// Replay 2.
    pub lesson: lesson::LessonSetup,
    /// Replay 3.
    pub slow: slow::SlowSetup,
    /// Replay 4.
    pub semian: semian::SemianSetup,
    /// Replay 5.
    pub slow_trials: slow_trials::SlowTrialsSetup,
    /// Replay 6.
    pub adaptive: adaptive::AdaptiveSetup,
    /// Replay 7.
    pub retry: retry::RetrySetup,
}

/// The results of all four replays.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Replays {
    /// Replay 1: cold start after an outage.
    pub cold_start: cold_start::ColdStart,
    /// Replay 2: the breaker-and-bulkhead lesson, steps 1–5.
    pub lesson: lesson::Lesson,
    /// Replay 3: slow, not down.
    pub slow: slow::Slow,
    /// Replay 4: many failing instances (Semian).
    pub semian: semian::Semian,
    /// Replay 5: slow under the timeout (issue 15).
    pub slow_trials: slow_trials::SlowTrials,
    /// Replay 1 again under other libraries' default recovery policies.
    pub peers: peers::Peers,
    /// Replay 6: the adaptive bulkhead beside the tuned fixed pool (issue 17).
    pub adaptive: adaptive::Adaptive,
    /// Every replay again with the defaults (issue 26).
    pub defaults: defaults::Defaults,
    /// Replay 7: seed 002's slow dependency with callers that retry, and a flaky one.
    pub retry: retry::Retries,
}

impl Replays {
    /// Runs the four replays, one after the other.
    pub fn run(setup: &Setup) -> io::Result<Replays> {
        let cold_start = cold_start::cold_start(&setup.cold_start)?;
        let lesson = lesson::lesson(&setup.lesson)?;
        let slow = slow::slow(&setup.slow)?;
        let semian = semian::semian(&setup.semian)?;
        let slow_trials = slow_trials::slow_trials(&setup.slow_trials)?;
        let tuned = defaults::Tuned {
            cold: (
                cold_start.follow_full_traffic,
                cold_start.relapses.1,
                cold_start.fallback_after.1,
            ),
            slow: (slow.p95.trip_after, slow.p95.others_shed),
            trials_closed: slow_trials.whole_rule.closed_while_slow,
            semian: semian.after.measured,
            lesson: lesson.step3_open_after,
        };
        Ok(Replays {
            defaults: defaults::defaults(setup, &tuned)?,
            peers: peers::peers(&setup.cold_start)?,
            adaptive: adaptive::adaptive(&setup.adaptive)?,
            retry: retry::retry(&setup.retry)?,
            cold_start,
            lesson,
            slow,
            semian,
            slow_trials,
        })
    }

    /// The figures of the comparison table.
    pub fn summary(&self) -> Summary {
        let c = &self.cold_start;
        let l = &self.lesson;
        let s = &self.slow;
        let m = &self.semian;
        Summary {
            cold_old_recovery_s: c.old_recovery.map(secs),
            cold_new_recovery_s: c.new_recovery.map(secs),
            cold_old_trials: c.old_trials,
            cold_follow_recovery_s: c.follow_recovery.map(secs),
            cold_follow_full_traffic_s: c.follow_full_traffic.map(secs),
            cold_relapses: (c.relapses.0 as u64, c.relapses.1 as u64),
            cold_fallback_after_pct: (c.fallback_after.0 * 100.0, c.fallback_after.1 * 100.0),
            lesson_pct: [l.step1, l.step2, l.step3, l.step4, l.step5].map(|x| x * 100.0),
            lesson_step4_all_stuck_s: l.step4_all_stuck.map(secs),
            lesson_step3_open_after_s: l.step3_open_after.map(secs),
            lesson_price_calls_per_s: l.price_calls_per_s,
            slow_error_only_trip_s: s.error_only.trip_after.map(secs),
            slow_p95_trip_s: s.p95.trip_after.map(secs),
            slow_util_pct: (s.error_only.utilization * 100.0, s.p95.utilization * 100.0),
            slow_checkout_pct: (
                s.error_only.checkout_answered * 100.0,
                s.p95.checkout_answered * 100.0,
            ),
            slow_others_shed_pct: (s.error_only.others_shed * 100.0, s.p95.others_shed * 100.0),
            semian_before_pct: m.before.predicted * 100.0,
            semian_after_pct: m.after.predicted * 100.0,
            semian_sim_after_pct: m.after.measured * 100.0,
            semian_sim_before_pct: m.before.measured * 100.0,
            semian_sim_before_demand_pct: m.before.demand * 100.0,
            trials_closed_while_slow: (
                self.slow_trials.failures_only.closed_while_slow as u64,
                self.slow_trials.whole_rule.closed_while_slow as u64,
            ),
            trials_sent_while_open: (
                self.slow_trials.failures_only.sent_while_open,
                self.slow_trials.whole_rule.sent_while_open,
            ),
            trials_probing: (
                self.slow_trials.probing.closed_while_slow as u64,
                self.slow_trials.probing.recovery.map(secs),
            ),
            trials_recovery_s: (
                self.slow_trials.failures_only.recovery.map(secs),
                self.slow_trials.whole_rule.recovery.map(secs),
            ),
            peers: self
                .peers
                .runs
                .iter()
                .map(|r| summary::PeerRow {
                    label: r.label,
                    recovery_s: r.recovery.map(secs),
                    times_opened: r.times_opened as u64,
                    fallback_after_pct: r.fallback_after * 100.0,
                    sent_while_down: r.sent_while_down,
                })
                .collect(),
            adaptive_lesson_others_pct: (
                self.adaptive.lesson_fixed.others_share * 100.0,
                self.adaptive.lesson_adaptive.others_share * 100.0,
            ),
            adaptive_lesson_limit: (
                self.adaptive.lesson_adaptive.limit_before as u64,
                self.adaptive.lesson_adaptive.limit_low as u64,
            ),
            adaptive_lesson_recovery_s: self.adaptive.lesson_adaptive.recovered_after.map(secs),
            adaptive_semian_others_pct: (
                self.adaptive.semian_fixed.others_share * 100.0,
                self.adaptive.semian_adaptive.others_share * 100.0,
            ),
            adaptive_semian_limit: (
                self.adaptive.semian_adaptive.limit_before as u64,
                self.adaptive.semian_adaptive.limit_low as u64,
            ),
            adaptive_semian_recovery_s: self.adaptive.semian_adaptive.recovered_after.map(secs),
            defaults: self.defaults.rows.clone(),
            retry_load_first_5s: (
                self.retry.none.load_first_5s,
                self.retry.naive.load_first_5s,
                self.retry.fusebox.load_first_5s,
            ),
            retry_trip_s: (
                self.retry.none.trip_after.map(secs),
                self.retry.naive.trip_after.map(secs),
                self.retry.fusebox.trip_after.map(secs),
            ),
            retry_utilization_pct: (
                self.retry.none.utilization * 100.0,
                self.retry.naive.utilization * 100.0,
                self.retry.fusebox.utilization * 100.0,
            ),
            retry_flaky_ok_pct: (
                self.retry.flaky_ok_without * 100.0,
                self.retry.flaky_ok_with * 100.0,
            ),
        }
    }

    /// Writes one SVG timeline per replay into `dir`; returns their paths.
    pub fn write_svgs(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        let c = &self.cold_start;
        let l = &self.lesson;
        let s = &self.slow;
        let m = &self.semian;
        let t = &self.slow_trials;
        let p = &self.peers;
        let a = &self.adaptive;
        let files: [(&str, &str, Vec<Panel<'_>>); 7] = [
            (
                "cold-start.svg",
                "Cold start: provider down 2 min, back cold",
                vec![
                    panel("old: one trial, open 30 s doubling to 30 min", &c.old),
                    panel("new: 5 % for 30 s, 4 s trial timeout, open 60 s", &c.new),
                    panel(
                        "probe + ramp: new, probing every 1 s, 5 s window, 5 s ramp",
                        &c.follow,
                    ),
                ],
            ),
            (
                "lesson.svg",
                "Breaker and bulkhead: the 200-worker API server",
                vec![
                    panel(
                        "steps 1-2: normal, then the price server hangs; timeout only",
                        &l.timeout_only,
                    ),
                    panel("step 3: the same outage with a breaker", &l.with_breaker),
                    panel(
                        "step 4: the report server stalls in a busy hour; one shared pool",
                        &l.stall,
                    ),
                    panel(
                        "step 5: the same stall, report pool of 60",
                        &l.with_bulkhead,
                    ),
                ],
            ),
            (
                "slow-not-down.svg",
                "Slow, not down: payments at 8 s instead of 80 ms, zero errors",
                vec![
                    panel("breaker counting errors only", &s.error_only.report),
                    panel("breaker with trip_p95 = 500ms", &s.p95.report),
                ],
            ),
            (
                "semian.svg",
                "42 Redis instances down, 2 threads, a breaker per instance",
                vec![
                    panel("0.25 s probe timeout, 2 s open", &m.before.report),
                    panel("50 ms probe timeout, 30 s open", &m.after.report),
                ],
            ),
            (
                "slow-under-timeout.svg",
                "Slow under the timeout: every answer correct, in 2 s, 3 s timeout",
                vec![
                    panel(
                        "trip_p95, trials judged on failures only",
                        &t.failures_only.report,
                    ),
                    panel(
                        "trip_p95, trials judged by the whole rule (fusebox)",
                        &t.whole_rule.report,
                    ),
                    panel(
                        "the whole rule, probing every 1 s while open",
                        &t.probing.report,
                    ),
                ],
            ),
            (
                "cold-start-peers.svg",
                "Cold start under each library's default recovery policy",
                p.runs.iter().map(|r| panel(r.label, &r.report)).collect(),
            ),
            (
                "adaptive.svg",
                "Adaptive limit beside the tuned pool: the dependency hangs 60 s, then answers",
                vec![
                    panel("lesson step 5, tuned pool of 60", &a.lesson_fixed.report),
                    panel("lesson step 5, adaptive limit", &a.lesson_adaptive.report),
                    panel("Semian, 42 instances, tuned pool", &a.semian_fixed.report),
                    panel(
                        "Semian, 42 instances, adaptive limit",
                        &a.semian_adaptive.report,
                    ),
                ],
            ),
        ];
        let mut out = Vec::new();
        let r = &self.retry;
        let files = files.into_iter().chain([(
            "retry.svg",
            "Slow payments (8 s), callers that retry: four attempts through the write-up's breaker",
            vec![
                panel("no retry", &r.none.report),
                panel("hand-written loop: everything retried, no budget", &r.naive.report),
                panel("fusebox retry: idempotent, default budget", &r.fusebox.report),
            ],
        ), (
            "defaults.svg",
            "The defaults: given only the timeout, or the card's line",
            self.defaults
                .reports
                .iter()
                .map(|(label, r)| panel(label, r))
                .collect(),
        )]);
        for (file, title, panels) in files {
            let path = dir.join(file);
            svg::timeline(&path, title, &panels)?;
            out.push(path);
        }
        Ok(out)
    }
}

fn panel<'a>(label: &'a str, report: &'a super::Report) -> Panel<'a> {
    Panel { label, report }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}
