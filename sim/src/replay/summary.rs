//! The comparison table and `summary.json` of the replays.

use std::fmt::Write as _;

use super::format::{dur, json_number, row};

/// The replays' key figures: the table the example prints and `summary.json`.
/// Percentages are in percent, times in seconds.
///
/// ```no_run
/// use fusebox_sim::replay::{Replays, Setup};
/// let summary = Replays::run(&Setup::default()).unwrap().summary();
/// assert!(summary.cold_old_recovery_s.unwrap() > 3600.0);
/// assert!(summary.to_json().contains("\"old_recovery_s\""));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Summary {
    /// Cold start, old configuration: recovery time (`None`: not within the horizon).
    pub cold_old_recovery_s: Option<f64>,
    /// Cold start, new configuration: recovery time.
    pub cold_new_recovery_s: Option<f64>,
    /// Cold start, old configuration: lone trials sent while the provider was cold.
    pub cold_old_trials: u64,
    /// Cold start, fusebox following the provider back (probe + ramp): until closed for good.
    pub cold_follow_recovery_s: Option<f64>,
    /// Cold start, follow configuration: until every call is admitted again (the ramp's end).
    pub cold_follow_full_traffic_s: Option<f64>,
    /// Cold start: times opened again after the provider was back (new, follow).
    pub cold_relapses: (u64, u64),
    /// Cold start: fallback share of checkouts after the provider was back (new, follow).
    pub cold_fallback_after_pct: (f64, f64),
    /// Lesson, steps 1–5: busy-worker share (step 5: of the workers outside the report pool).
    pub lesson_pct: [f64; 5],
    /// Lesson, step 4: from the stall until every worker is busy.
    pub lesson_step4_all_stuck_s: Option<f64>,
    /// Lesson, step 3: from the outage until the breaker opened.
    pub lesson_step3_open_after_s: Option<f64>,
    /// Lesson: price-server calls per second in step 2 and in step 3 once open.
    pub lesson_price_calls_per_s: (f64, f64),
    /// Slow, not down: time to trip of the error-only breaker (`None`: never).
    pub slow_error_only_trip_s: Option<f64>,
    /// Slow, not down: time to trip with `trip_p95`.
    pub slow_p95_trip_s: Option<f64>,
    /// Slow, not down: pool utilization while slow (error-only, p95).
    pub slow_util_pct: (f64, f64),
    /// Slow, not down: checkout answered within 2 s while slow (error-only, p95).
    pub slow_checkout_pct: (f64, f64),
    /// Slow, not down: unrelated requests shed while slow (error-only, p95).
    pub slow_others_shed_pct: (f64, f64),
    /// Semian, untuned: `tune::extra_utilization` (263 %).
    pub semian_before_pct: f64,
    /// Semian, tuned: `tune::extra_utilization` (about 4 %).
    pub semian_after_pct: f64,
    /// Semian, tuned: wasted utilization the simulation measures on 2 threads.
    pub semian_sim_after_pct: f64,
    /// Semian, untuned: busy share of the 2 threads (saturated).
    pub semian_sim_before_pct: f64,
    /// Semian, untuned: thread-seconds demanded per second over 2 threads.
    pub semian_sim_before_demand_pct: f64,
    /// Slow under the timeout: times closed while slow (trials on failures only, whole rule).
    pub trials_closed_while_slow: (u64, u64),
    /// Slow under the timeout: calls that reached the slow provider after the first trip.
    pub trials_sent_while_open: (u64, u64),
    /// Slow under the timeout: from fast again until closed for good.
    pub trials_recovery_s: (Option<f64>, Option<f64>),
    /// Slow under the timeout, whole rule probing every second: times closed while slow, and
    /// from fast again until closed for good.
    pub trials_probing: (u64, Option<f64>),
    /// The cold start under each library's default recovery policy, fusebox's first.
    pub peers: Vec<PeerRow>,
    /// Adaptive limit, lesson step 5: share of the workers left to the other routes while the
    /// report server hangs (tuned fixed pool, adaptive limit).
    pub adaptive_lesson_others_pct: (f64, f64),
    /// Adaptive limit, lesson: the limit before the stall and its lowest during it.
    pub adaptive_lesson_limit: (u64, u64),
    /// Adaptive limit, lesson: from the report server's recovery until the limit is back.
    pub adaptive_lesson_recovery_s: Option<f64>,
    /// Adaptive limit, Semian's 42 instances: the others' share (fixed, adaptive).
    pub adaptive_semian_others_pct: (f64, f64),
    /// Adaptive limit, Semian: the limit before the outage and its lowest during it.
    pub adaptive_semian_limit: (u64, u64),
    /// Adaptive limit, Semian: from Redis' recovery until the limit is back.
    pub adaptive_semian_recovery_s: Option<f64>,
    /// Issue 26: every replay with the defaults, beside the best tuned configuration.
    pub defaults: Vec<super::DefaultsRow>,
    /// Retries, slow dependency: calls it received per request in the first 5 s of the
    /// slowdown (no retry, hand-written loop, fusebox's retry).
    pub retry_load_first_5s: (f64, f64, f64),
    /// Retries, slow dependency: seconds until the breaker opened (same three callers).
    pub retry_trip_s: (Option<f64>, Option<f64>, Option<f64>),
    /// Retries, slow dependency: mean busy share of the pool while slow, in percent.
    pub retry_utilization_pct: (f64, f64, f64),
    /// Retries, flaky dependency (5 % failures): checkouts answered `Ok`, in percent,
    /// without and with fusebox's retry.
    pub retry_flaky_ok_pct: (f64, f64),
}

/// One recovery policy in the cold-start outage (see `replay::peers`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PeerRow {
    /// The library and the defaults it mimics.
    pub label: &'static str,
    /// From the provider being back until closed for good (`None`: not within the horizon).
    pub recovery_s: Option<f64>,
    /// Times the breaker opened.
    pub times_opened: u64,
    /// Checkouts answered by the fallback after the provider was back, in percent.
    pub fallback_after_pct: f64,
    /// Calls sent to the provider while it was down.
    pub sent_while_down: u64,
}

impl Summary {
    /// `summary.json`: nested objects keyed as issue 5 lists them (`cold_start.old_recovery_s`,
    /// `lesson.step1_pct` ... `lesson.step5_pct`, `lesson.step4_all_stuck_s`,
    /// `slow.error_only_trip_s` (null when it never trips), `slow.p95_trip_s`,
    /// `semian.before_pct`, `semian.after_pct`, `semian.sim_after_pct`), plus a few extras.
    pub fn to_json(&self) -> String {
        let p = &self.lesson_pct;
        let groups: [Group; 7] = [
            (
                "cold_start",
                vec![
                    ("old_recovery_s", self.cold_old_recovery_s),
                    ("new_recovery_s", self.cold_new_recovery_s),
                    ("old_trials_while_cold", Some(self.cold_old_trials as f64)),
                    ("follow_recovery_s", self.cold_follow_recovery_s),
                    ("follow_full_traffic_s", self.cold_follow_full_traffic_s),
                    ("new_relapses", Some(self.cold_relapses.0 as f64)),
                    ("follow_relapses", Some(self.cold_relapses.1 as f64)),
                    (
                        "new_fallback_after_pct",
                        Some(self.cold_fallback_after_pct.0),
                    ),
                    (
                        "follow_fallback_after_pct",
                        Some(self.cold_fallback_after_pct.1),
                    ),
                ],
            ),
            (
                "lesson",
                vec![
                    ("step1_pct", Some(p[0])),
                    ("step2_pct", Some(p[1])),
                    ("step3_pct", Some(p[2])),
                    ("step4_pct", Some(p[3])),
                    ("step4_all_stuck_s", self.lesson_step4_all_stuck_s),
                    ("step5_pct", Some(p[4])),
                    ("step3_open_after_s", self.lesson_step3_open_after_s),
                    (
                        "step2_price_calls_per_s",
                        Some(self.lesson_price_calls_per_s.0),
                    ),
                    (
                        "step3_price_calls_per_s",
                        Some(self.lesson_price_calls_per_s.1),
                    ),
                ],
            ),
            (
                "slow",
                vec![
                    ("error_only_trip_s", self.slow_error_only_trip_s),
                    ("p95_trip_s", self.slow_p95_trip_s),
                    ("error_only_util_pct", Some(self.slow_util_pct.0)),
                    ("p95_util_pct", Some(self.slow_util_pct.1)),
                    (
                        "error_only_checkout_answered_pct",
                        Some(self.slow_checkout_pct.0),
                    ),
                    ("p95_checkout_answered_pct", Some(self.slow_checkout_pct.1)),
                    (
                        "error_only_others_shed_pct",
                        Some(self.slow_others_shed_pct.0),
                    ),
                    ("p95_others_shed_pct", Some(self.slow_others_shed_pct.1)),
                ],
            ),
            (
                "semian",
                vec![
                    ("before_pct", Some(self.semian_before_pct)),
                    ("after_pct", Some(self.semian_after_pct)),
                    ("sim_after_pct", Some(self.semian_sim_after_pct)),
                    ("sim_before_pct", Some(self.semian_sim_before_pct)),
                    (
                        "sim_before_demand_pct",
                        Some(self.semian_sim_before_demand_pct),
                    ),
                ],
            ),
            (
                "slow_under_timeout",
                vec![
                    (
                        "failures_only_closed_while_slow",
                        Some(self.trials_closed_while_slow.0 as f64),
                    ),
                    (
                        "whole_rule_closed_while_slow",
                        Some(self.trials_closed_while_slow.1 as f64),
                    ),
                    (
                        "failures_only_sent_while_open",
                        Some(self.trials_sent_while_open.0 as f64),
                    ),
                    (
                        "whole_rule_sent_while_open",
                        Some(self.trials_sent_while_open.1 as f64),
                    ),
                    ("failures_only_recovery_s", self.trials_recovery_s.0),
                    ("whole_rule_recovery_s", self.trials_recovery_s.1),
                    (
                        "probing_closed_while_slow",
                        Some(self.trials_probing.0 as f64),
                    ),
                    ("probing_recovery_s", self.trials_probing.1),
                ],
            ),
            (
                "adaptive",
                vec![
                    (
                        "lesson_fixed_others_pct",
                        Some(self.adaptive_lesson_others_pct.0),
                    ),
                    (
                        "lesson_adaptive_others_pct",
                        Some(self.adaptive_lesson_others_pct.1),
                    ),
                    (
                        "lesson_limit_before",
                        Some(self.adaptive_lesson_limit.0 as f64),
                    ),
                    (
                        "lesson_limit_low",
                        Some(self.adaptive_lesson_limit.1 as f64),
                    ),
                    ("lesson_recovery_s", self.adaptive_lesson_recovery_s),
                    (
                        "semian_fixed_others_pct",
                        Some(self.adaptive_semian_others_pct.0),
                    ),
                    (
                        "semian_adaptive_others_pct",
                        Some(self.adaptive_semian_others_pct.1),
                    ),
                    (
                        "semian_limit_before",
                        Some(self.adaptive_semian_limit.0 as f64),
                    ),
                    (
                        "semian_limit_low",
                        Some(self.adaptive_semian_limit.1 as f64),
                    ),
                    ("semian_recovery_s", self.adaptive_semian_recovery_s),
                ],
            ),
            (
                "retry",
                vec![
                    ("none_load_first_5s", Some(self.retry_load_first_5s.0)),
                    ("naive_load_first_5s", Some(self.retry_load_first_5s.1)),
                    ("fusebox_load_first_5s", Some(self.retry_load_first_5s.2)),
                    ("none_trip_s", self.retry_trip_s.0),
                    ("naive_trip_s", self.retry_trip_s.1),
                    ("fusebox_trip_s", self.retry_trip_s.2),
                    ("none_utilization_pct", Some(self.retry_utilization_pct.0)),
                    ("naive_utilization_pct", Some(self.retry_utilization_pct.1)),
                    (
                        "fusebox_utilization_pct",
                        Some(self.retry_utilization_pct.2),
                    ),
                    ("flaky_ok_without_pct", Some(self.retry_flaky_ok_pct.0)),
                    ("flaky_ok_with_pct", Some(self.retry_flaky_ok_pct.1)),
                ],
            ),
        ];
        let mut s = String::from("{\n");
        for (gi, (group, fields)) in groups.iter().enumerate() {
            let _ = writeln!(s, "  \"{group}\": {{");
            for (fi, (key, v)) in fields.iter().enumerate() {
                let comma = if fi + 1 < fields.len() { "," } else { "" };
                let _ = writeln!(s, "    \"{key}\": {}{comma}", json_number(*v));
            }
            let comma = if gi + 1 < groups.len() { "," } else { "" };
            let _ = writeln!(s, "  }}{comma}");
        }
        // The peers: an array of rows, after the groups.
        s.truncate(s.trim_end().len());
        s.push_str(",\n  \"cold_start_peers\": [\n");
        for (i, r) in self.peers.iter().enumerate() {
            let comma = if i + 1 < self.peers.len() { "," } else { "" };
            let _ = writeln!(
                s,
                "    {{\"policy\": \"{}\", \"recovery_s\": {}, \"times_opened\": {}, \"fallback_after_pct\": {}, \"sent_while_down\": {}}}{comma}",
                r.label.replace('"', "'"),
                json_number(r.recovery_s),
                r.times_opened,
                json_number(Some(r.fallback_after_pct)),
                r.sent_while_down,
            );
        }
        s.push_str("  ],\n  \"defaults\": [\n");
        for (i, r) in self.defaults.iter().enumerate() {
            let comma = if i + 1 < self.defaults.len() { "," } else { "" };
            let _ = writeln!(
                s,
                "    {{\"replay\": \"{}\", \"measure\": \"{}\", \"target\": \"{}\", \"given\": \"{}\", \"defaults\": {}, \"tuned\": {}, \"met\": {}}}{comma}",
                r.replay,
                r.measure,
                r.target,
                r.given.replace('"', "'"),
                json_number(r.defaults),
                json_number(r.tuned),
                r.met,
            );
        }
        s.push_str("  ]\n}\n");
        s
    }

    /// The cold start under each library's default recovery policy: one row each.
    pub fn peers_table(&self) -> String {
        let head = [
            "policy (defaults it mimics)",
            "recovery",
            "opened",
            "fallback after",
            "calls while down",
        ]
        .map(str::to_owned);
        let rows: Vec<[String; 5]> = self
            .peers
            .iter()
            .map(|r| {
                [
                    r.label.to_owned(),
                    dur(r.recovery_s),
                    r.times_opened.to_string(),
                    format!("{:.1} %", r.fallback_after_pct),
                    r.sent_while_down.to_string(),
                ]
            })
            .collect();
        let mut widths = [0usize; 5];
        for r in std::iter::once(&head).chain(&rows) {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |r: &[String; 5]| {
            let mut out = String::new();
            for (i, (c, w)) in r.iter().zip(widths).enumerate() {
                let pad = " ".repeat(w - c.chars().count());
                if i == 0 {
                    let _ = write!(out, "{c}{pad}  ");
                } else {
                    let _ = write!(out, "{pad}{c}  ");
                }
            }
            out.trim_end().to_owned()
        };
        let mut out = line(&head);
        out.push('\n');
        out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 8));
        for r in &rows {
            out.push('\n');
            out.push_str(&line(r));
        }
        out
    }

    /// Issue 26's table: each replay's figure with the defaults, beside the best tuned one.
    pub fn defaults_table(&self) -> String {
        super::defaults::table(&self.defaults)
    }

    /// The comparison table: each figure as simulated, next to the write-up's.
    pub fn table(&self) -> String {
        let l = &self.lesson_pct;
        let pct = |x: f64| format!("{x:.1} %");
        let opt_s = |x: Option<f64>| x.map_or_else(|| "never".to_owned(), |s| format!("{s:.1} s"));
        let rows: Vec<[String; 4]> = vec![
            row(
                "cold start",
                "recovery, old config",
                dur(self.cold_old_recovery_s),
                "~3 h (5:05 vs 1:56)",
            ),
            row(
                "",
                "recovery, new config",
                dur(self.cold_new_recovery_s),
                "a few minutes",
            ),
            row(
                "",
                "recovery, probe + ramp (all traffic)",
                format!(
                    "{} ({})",
                    opt_s(self.cold_follow_recovery_s),
                    opt_s(self.cold_follow_full_traffic_s)
                ),
                "(issue 22: within 15 s)",
            ),
            row(
                "",
                "relapses; fallback share after (new / probe + ramp)",
                format!(
                    "{} / {}; {} / {}",
                    self.cold_relapses.0,
                    self.cold_relapses.1,
                    pct(self.cold_fallback_after_pct.0),
                    pct(self.cold_fallback_after_pct.1)
                ),
                "",
            ),
            row(
                "",
                "lone trials while cold (old)",
                self.cold_old_trials.to_string(),
                "1 per open period",
            ),
            row("lesson", "step 1: normal", pct(l[0]), "31 %"),
            row("", "step 2: price down, timeout only", pct(l[1]), "81 %"),
            row("", "step 3: with a breaker", pct(l[2]), "21 %"),
            row(
                "",
                "step 3: breaker opened after",
                opt_s(self.lesson_step3_open_after_s),
                "~0.3 s",
            ),
            row(
                "",
                "price calls/s, step 2 -> 3",
                format!(
                    "{:.0} -> {:.2}",
                    self.lesson_price_calls_per_s.0, self.lesson_price_calls_per_s.1
                ),
                "400 -> ~0.3",
            ),
            row("", "step 4: report stall, busy share", pct(l[3]), "100 %"),
            row(
                "",
                "step 4: all workers busy after",
                opt_s(self.lesson_step4_all_stuck_s),
                "~3.3 s",
            ),
            row("", "step 5: bulkhead, other workers", pct(l[4]), "16 %"),
            row(
                "slow",
                "time to trip, errors only",
                opt_s(self.slow_error_only_trip_s),
                "never",
            ),
            row(
                "",
                "time to trip, trip_p95",
                opt_s(self.slow_p95_trip_s),
                "trips",
            ),
            row(
                "",
                "pool busy, errors only / p95",
                format!(
                    "{} / {}",
                    pct(self.slow_util_pct.0),
                    pct(self.slow_util_pct.1)
                ),
                "full / low",
            ),
            row(
                "",
                "checkout answered <2s, errors / p95",
                format!(
                    "{} / {}",
                    pct(self.slow_checkout_pct.0),
                    pct(self.slow_checkout_pct.1)
                ),
                "spinning / email",
            ),
            row(
                "",
                "other requests shed, errors / p95",
                format!(
                    "{} / {}",
                    pct(self.slow_others_shed_pct.0),
                    pct(self.slow_others_shed_pct.1)
                ),
                "site-wide / none",
            ),
            row(
                "semian",
                "untuned: tune (equation)",
                pct(self.semian_before_pct),
                "263 %",
            ),
            row(
                "",
                "untuned: sim demand / 2 threads",
                pct(self.semian_sim_before_demand_pct),
                "> 100 %",
            ),
            row(
                "",
                "untuned: sim busy, 2 threads",
                pct(self.semian_sim_before_pct),
                "saturated",
            ),
            row(
                "",
                "tuned: tune (equation)",
                pct(self.semian_after_pct),
                "4 %",
            ),
            row(
                "",
                "tuned: sim wasted, 2 threads",
                pct(self.semian_sim_after_pct),
                "4 %",
            ),
            row(
                "2s < timeout",
                "closed while slow, failures / rule",
                format!(
                    "{} / {}",
                    self.trials_closed_while_slow.0, self.trials_closed_while_slow.1
                ),
                "once per open period / never",
            ),
            row(
                "",
                "calls onto it once open, fail / rule",
                format!(
                    "{} / {}",
                    self.trials_sent_while_open.0, self.trials_sent_while_open.1
                ),
                "~70 per close / 5 % trials",
            ),
            row(
                "",
                "closed after it heals, fail / rule",
                format!(
                    "{} / {}",
                    opt_s(self.trials_recovery_s.0),
                    opt_s(self.trials_recovery_s.1)
                ),
                "<= 20 s open + 10 s window",
            ),
            row(
                "",
                "rule + probe every 1 s: closed while slow; after",
                format!(
                    "{}; {}",
                    self.trials_probing.0,
                    opt_s(self.trials_probing.1)
                ),
                "never (issue 22)",
            ),
            row(
                "adaptive pool",
                "lesson: others' workers, fixed / adaptive",
                format!(
                    "{} / {}",
                    pct(self.adaptive_lesson_others_pct.0),
                    pct(self.adaptive_lesson_others_pct.1)
                ),
                "adaptive >= fixed - 2 points",
            ),
            row(
                "",
                "lesson: limit before / low / back after",
                format!(
                    "{} / {} / {}",
                    self.adaptive_lesson_limit.0,
                    self.adaptive_lesson_limit.1,
                    opt_s(self.adaptive_lesson_recovery_s)
                ),
                "back <= 30 s",
            ),
            row(
                "",
                "semian: others' workers, fixed / adaptive",
                format!(
                    "{} / {}",
                    pct(self.adaptive_semian_others_pct.0),
                    pct(self.adaptive_semian_others_pct.1)
                ),
                "adaptive >= fixed - 2 points",
            ),
            row(
                "",
                "semian: limit before / low / back after",
                format!(
                    "{} / {} / {}",
                    self.adaptive_semian_limit.0,
                    self.adaptive_semian_limit.1,
                    opt_s(self.adaptive_semian_recovery_s)
                ),
                "back <= 30 s",
            ),
            row(
                "retries",
                "slow: calls per request, first 5 s, none / loop / fusebox",
                format!(
                    "{:.2} / {:.2} / {:.2}",
                    self.retry_load_first_5s.0,
                    self.retry_load_first_5s.1,
                    self.retry_load_first_5s.2
                ),
                "retries pile on (~4x)",
            ),
            row(
                "",
                "slow: opened after, none / loop / fusebox",
                format!(
                    "{} / {} / {}",
                    opt_s(self.retry_trip_s.0),
                    opt_s(self.retry_trip_s.1),
                    opt_s(self.retry_trip_s.2)
                ),
                "fusebox as fast as none",
            ),
            row(
                "",
                "flaky 5 %: answered Ok, without / with retry",
                format!(
                    "{} / {}",
                    pct(self.retry_flaky_ok_pct.0),
                    pct(self.retry_flaky_ok_pct.1)
                ),
                ">= 99.7 % with",
            ),
        ];
        let head = ["replay", "figure", "simulated", "write-up"].map(str::to_owned);
        let mut widths = [0usize; 4];
        for r in std::iter::once(&head).chain(&rows) {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |r: &[String; 4]| {
            let mut s = String::new();
            for (i, (c, w)) in r.iter().zip(widths).enumerate() {
                let pad = w - c.chars().count();
                if i == 2 {
                    let _ = write!(s, "{}{c}  ", " ".repeat(pad));
                } else {
                    let _ = write!(s, "{c}{}  ", " ".repeat(pad));
                }
            }
            s.trim_end().to_owned()
        };
        let mut out = line(&head);
        out.push('\n');
        out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 6));
        for r in &rows {
            out.push('\n');
            out.push_str(&line(r));
        }
        out
    }
}

/// One JSON object of the summary: its key and its fields.
type Group = (&'static str, Vec<(&'static str, Option<f64>)>);
