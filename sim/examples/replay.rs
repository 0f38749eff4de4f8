//! The README's first command: `cargo run --release --example replay`.
//!
//! Replays the four incident write-ups of `seeds/` in virtual time against the real breakers
//! and bulkheads, prints one comparison table, writes an SVG timeline per replay and
//! `summary.json` under `target/fusebox-replay/`.
//!
//! With overrides (`-- --set payments.trip_p95=500ms`, repeatable, or `FUSEBOX_SIM_SET="redis.open_for=30s
//! redis.half_open_timeout=50ms"`, or the runtime's own `FUSEBOX_BREAKER_REDIS="redis; open_for=30s"`
//! as a process takes them at start), it replays instead each incident whose breaker they name with
//! the live settings and with the candidate, side by side (`fusebox_sim::replay::candidate`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[path = "replay/annotated.rs"]
mod annotated;

use fusebox::State;
use fusebox_sim::replay::{Replays, Setup};
use fusebox_sim::{BreakerTimeline, Overrides};

fn main() -> std::io::Result<()> {
    let started = Instant::now();
    // A candidate configuration (`--set payments.trip_p95=500ms`, or `FUSEBOX_SIM_SET`):
    // replayed beside the live settings instead of the full run (`fusebox_sim::replay::candidate`).
    let overrides = overrides().unwrap_or_else(|e| {
        eprintln!("replay: {e}");
        std::process::exit(2);
    });
    if !overrides.is_empty() {
        return candidates(&overrides, started);
    }
    println!(
        "fusebox replays: seven replays of outages in virtual time, real breakers and bulkheads\n"
    );
    let replays = Replays::run(&Setup::default())?;
    let summary = replays.summary();

    let c = &replays.cold_start;
    println!("1 cold start: provider down 2 min, back cold (1.5-3 s until warm), 800 ms timeout");
    for (name, r) in [
        ("old", &c.old),
        ("new", &c.new),
        ("probe + ramp", &c.follow),
    ] {
        let t = &r.breakers[0];
        let after = r.window("back, cold").map(|w| w.counts).unwrap_or_default();
        println!(
            "  {name}: opened {} times; after the provider was back, {:.1} % of checkouts got the manual-entry fallback",
            t.times_opened(),
            after.fallback_share() * 100.0,
        );
    }
    let periods: Vec<String> = open_periods(&c.old.breakers[0])
        .iter()
        .map(|d| format!("{}", d.as_secs_f64() / 60.0))
        .collect();
    println!("  old open periods (min): {}", periods.join(", "));
    let a = annotated::cold_start(&Setup::default().cold_start)?;
    let same = a.recovery == (c.old_recovery, c.new_recovery)
        && a.follow == c.follow_recovery
        && a.conflicts == 0;
    println!(
        "  the same replay through #[breaker]: old {}, new {}, probe + ramp {} ({})",
        hms(a.recovery.0),
        hms(a.recovery.1),
        hms(a.follow),
        if same {
            "identical: same settings, same code path"
        } else {
            "DIFFERENT from the builder-based run"
        },
    );
    let l = &replays.lesson;
    println!(
        "2 lesson: 200 workers; report pool {} (tune::pool_size); step 5 starts {:.0} statements/s and refuses {:.0}/s",
        l.pool, l.step5_started_refused_per_s.0, l.step5_started_refused_per_s.1,
    );
    let s = &replays.slow;
    println!(
        "3 slow, not down: error-only breaker opened {} times; trip_p95 breaker opened {} times",
        s.error_only.report.breakers[0].times_opened(),
        s.p95.report.breakers[0].times_opened(),
    );
    let m = &replays.semian;
    println!(
        "4 semian: untuned on 2 threads sheds {:.0} % of requests; tuned sheds {:.1} %",
        m.before.shed * 100.0,
        m.after.shed * 100.0,
    );
    let t = &replays.slow_trials;
    println!(
        "5 slow under the timeout (2 s answers, 3 s timeout, 100/s): trials on failures only closed {} times while slow; by the whole rule {} times, closed {} after it healed",
        t.failures_only.closed_while_slow,
        t.whole_rule.closed_while_slow,
        hms(t.whole_rule.recovery),
    );
    let a = &replays.adaptive;
    println!(
        "6 adaptive pool, not told the pool: the lesson's stuck report server leaves the others {:.1} % of the workers ({:.1} % with the tuned pool), limit back {} after it answers; Semian's 42 instances {:.1} % ({:.1} %)",
        a.lesson_adaptive.others_share * 100.0,
        a.lesson_fixed.others_share * 100.0,
        a.lesson_adaptive
            .recovered_after
            .map_or_else(|| "never".to_owned(), |d| format!("{:.1} s", d.as_secs_f64())),
        a.semian_adaptive.others_share * 100.0,
        a.semian_fixed.others_share * 100.0,
    );
    let r = &replays.retry;
    println!(
        "7 retries on seed 002's slow payments (write-up's breaker, 4 attempts): {:.2} calls per request in the first 5 s with no retry, {:.2} with a hand-written loop, {:.2} with fusebox's retry (budget: 20 % + 1/s); a 5 %-flaky service answers {:.2} % Ok without retries, {:.2} % with",
        r.none.load_first_5s,
        r.naive.load_first_5s,
        r.fusebox.load_first_5s,
        r.flaky_ok_without * 100.0,
        r.flaky_ok_with * 100.0,
    );
    println!("\n{}\n", summary.table());
    println!("cold start under each library's default recovery policy (real fusebox breakers configured that way):\n");
    println!("{}\n", summary.peers_table());
    println!("the defaults (issue 26): each replay with a breaker given only its timeout, or the design card's line (trip_p95 + timeout), and a bulkhead given only its pool (or limit = adaptive), beside the best tuned configuration:\n");
    println!("{}\n", summary.defaults_table());

    let dir = target_dir().join("fusebox-replay");
    for path in replays.write_svgs(&dir)? {
        println!("timeline: {}", shown(&path).display());
    }
    let json = dir.join("summary.json");
    std::fs::write(&json, summary.to_json())?;
    println!("summary:  {}", shown(&json).display());
    println!("\nwall time {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The overrides a process would take at start (`FUSEBOX_BREAKER*`, as
/// `fusebox::settings::Overrides::from_env` reads them) for the replays' breakers, then those
/// given in `FUSEBOX_SIM_SET` (items separated by spaces or commas), then as `--set
/// name.key=value` (repeatable): a later one wins.
fn overrides() -> Result<Overrides, String> {
    let at_start = fusebox::settings::Overrides::from_env().map_err(|e| e.to_string())?;
    let names = fusebox_sim::replay::candidate::LIVE.map(|(name, _)| name);
    let mut o = Overrides::new().with_settings_overrides(&at_start, &names);
    if let Ok(text) = std::env::var("FUSEBOX_SIM_SET") {
        let set = Overrides::parse(&text).map_err(|e| e.to_string())?;
        for name in set.names() {
            o = o.breaker(name, set.pairs_for(name));
        }
    }
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let item = match arg.strip_prefix("--set=") {
            Some(item) => item.to_owned(),
            None if arg == "--set" => args.next().ok_or("--set needs name.key=value")?,
            None => {
                return Err(format!(
                    "unknown argument `{arg}`: the replay takes --set name.key=value"
                ))
            }
        };
        o.set_arg(&item).map_err(|e| e.to_string())?;
    }
    Ok(o)
}

/// Each replay the overrides concern, with its live settings and with the candidate.
fn candidates(overrides: &Overrides, started: Instant) -> std::io::Result<()> {
    println!("fusebox replays: a candidate configuration beside the live one, on the recorded incidents\n");
    let runs = fusebox_sim::replay::candidate::candidates(&Setup::default(), overrides)
        .unwrap_or_else(|e| {
            eprintln!("replay: {e}");
            std::process::exit(2);
        });
    println!("{}", fusebox_sim::replay::candidate::table(&runs));
    println!("wall time {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// `3h 29m 39s`, or `never`.
fn hms(d: Option<Duration>) -> String {
    let Some(d) = d else {
        return "never".to_owned();
    };
    let t = d.as_secs_f64().round() as u64;
    format!("{}h {:02}m {:02}s", t / 3600, t / 60 % 60, t % 60)
}

/// How long each open period lasted, rounded to the second.
fn open_periods(t: &BreakerTimeline) -> Vec<Duration> {
    t.transitions
        .windows(2)
        .filter(|w| w[0].1 == State::Open)
        .map(|w| Duration::from_secs((w[1].0 - w[0].0).as_secs_f64().round() as u64))
        .collect()
}

/// The path relative to the current folder when it is inside it (shorter to read).
fn shown(path: &Path) -> &Path {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok())
        .unwrap_or(path)
}

/// `$CARGO_TARGET_DIR`, or the workspace's `target/`.
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        // The workspace's `target/`, one level above this package.
        _ => Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap_or(Path::new("."))
            .join("target"),
    }
}
