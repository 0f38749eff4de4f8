//! A candidate configuration replayed against recorded incidents (issue 29): each replay whose
//! breaker the [`Overrides`] name runs twice, with the write-up's settings in force at the time
//! (the live ones) and with the overrides on top (the candidate), so a change can be judged on
//! the incident before anyone tries it live.
//!
//! | breaker | replay | live settings |
//! |---|---|---|
//! | `address-lookup` | 1, cold start (`seeds/cold-start-recovery.txt`) | [`cold_start::old_breaker`] |
//! | `payments` | 3, slow not down (`seeds/slow-not-down.txt`) | [`slow::error_only_breaker`] |
//! | `redis` | 4, Semian (`seeds/semian-misconfigured.txt`) | [`semian::before_breaker`] |
//!
//! The live settings are written here as settings pairs, the form overrides take, and a test
//! checks each equals the replay's builder.
//!
//! From the command line, the replay example takes the overrides and prints the table:
//!
//! ```text
//! cargo run --release --example replay -- --set payments.trip_p95=500ms
//! cargo run --release --example replay -- --set redis.open_for=30s --set redis.half_open_timeout=50ms
//! FUSEBOX_SIM_SET="address-lookup.half_open_pct=5 address-lookup.half_open_window=30s" \
//!     cargo run --release --example replay
//! ```
//!
//! The runtime's own overrides are taken too, as a process takes them at start
//! (`FUSEBOX_BREAKER_REDIS="redis; open_for=30s"`; from a file, through
//! [`Overrides::with_settings_overrides`](crate::Overrides::with_settings_overrides)), under
//! `FUSEBOX_SIM_SET` and `--set`.
//!
//! Each `--set` is `breaker.key=value`, a key of the settings table (`fusebox::settings::KEYS`)
//! with a value as the attribute takes it; the variable holds the same items separated by
//! spaces or commas. A bad value stops the run with the breaker, the pairs and the reason; so
//! does a breaker no replay has. Without overrides the example's output is the full run, as
//! ever.

use std::fmt::Write as _;
use std::io;
use std::time::Duration;

use super::{cold_start, semian, slow, Setup};
use crate::{OverrideError, Overrides};

/// The breakers a candidate may name, with their replay's live settings as pairs.
///
/// ```
/// use fusebox_sim::replay::candidate::LIVE;
/// assert_eq!(LIVE.map(|(name, _)| name), ["address-lookup", "payments", "redis"]);
/// ```
pub const LIVE: [(&str, &[(&str, &str)]); 3] = [
    (
        "address-lookup",
        &[
            ("window_calls", "20"),
            ("failure_rate", "50"),
            ("timeout", "800ms"),
            ("open_for", "30s"),
            ("backoff", "2"),
            ("open_for_max", "30m"),
            ("half_open_calls", "1"),
        ],
    ),
    (
        "payments",
        &[
            ("failure_rate", "50"),
            ("timeout", "30s"),
            ("half_open_timeout", "1s"),
        ],
    ),
    (
        "redis",
        &[
            ("window_calls", "3"),
            ("failure_rate", "100"),
            ("timeout", "250ms"),
            ("half_open_timeout", "250ms"),
            ("open_for", "2s"),
            ("half_open_calls", "1"),
        ],
    ),
];

/// One figure of a replay, live and with the candidate, as printed.
///
/// ```
/// use fusebox_sim::replay::candidate::{candidates, Figure};
/// use fusebox_sim::{replay::Setup, Overrides};
/// let mut setup = Setup::default();
/// (setup.semian.instances, setup.semian.cycles) = (4, 1);
/// let runs = candidates(&setup, &Overrides::parse("redis.open_for=30s").unwrap()).unwrap();
/// let f: &Figure = &runs[0].figures[0];
/// assert_eq!(f.what, "requests shed (2 threads)");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Figure {
    /// What it measures.
    pub what: &'static str,
    /// With the live settings.
    pub live: String,
    /// With the candidate's.
    pub candidate: String,
}

/// One replay, live and with the candidate (see [`candidates`] for an example).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CandidateRun {
    /// The replay.
    pub replay: &'static str,
    /// The breaker the overrides named.
    pub breaker: &'static str,
    /// The overrides applied, as given.
    pub overrides: Vec<(String, String)>,
    /// Its figures, side by side.
    pub figures: Vec<Figure>,
}

/// Every replay the overrides concern, live and with the candidate. An override of a breaker
/// no replay has, or one the settings table refuses, is an error naming it.
///
/// ```
/// use fusebox_sim::replay::{candidate::candidates, Setup};
/// use fusebox_sim::Overrides;
/// let mut setup = Setup::default();
/// setup.semian.instances = 6;
/// setup.semian.cycles = 2;
/// let o = Overrides::parse("redis.open_for=30s redis.half_open_timeout=50ms").unwrap();
/// let runs = candidates(&setup, &o).unwrap();
/// assert_eq!(runs[0].breaker, "redis");
/// assert_ne!(runs[0].figures[0].live, runs[0].figures[0].candidate);
/// assert!(candidates(&setup, &Overrides::parse("nope.open_for=1s").unwrap()).is_err());
/// ```
pub fn candidates(
    setup: &Setup,
    overrides: &Overrides,
) -> Result<Vec<CandidateRun>, CandidateError> {
    let known: Vec<&'static str> = LIVE.iter().map(|(n, _)| *n).collect();
    overrides.check_names(&known)?;
    let mut runs = Vec::new();
    for (name, live_pairs) in LIVE {
        if overrides.pairs_for(name).is_empty() {
            continue;
        }
        let live = Overrides::new().apply(name, live_pairs)?;
        let candidate = overrides.apply(name, live_pairs)?;
        let (replay, figures) = match name {
            "address-lookup" => {
                let s = &setup.cold_start;
                let (a, ra) = cold_start::run_one(s, &live)?;
                let (b, rb) = cold_start::run_one(s, &candidate)?;
                let up = cold_start::up_again();
                let opened = |r: &crate::Report| r.breakers.first().map_or(0, |t| t.times_opened());
                (
                    "1 cold start",
                    vec![
                        fig("recovery after the provider was back", hms(ra), hms(rb)),
                        fig("times opened", opened(&a), opened(&b)),
                        fig(
                            "times opened after it was back",
                            cold_start::relapses(&a, up),
                            cold_start::relapses(&b, up),
                        ),
                        fig(
                            "checkouts on the fallback after it was back",
                            pct(cold_start::fallback_after(&a)),
                            pct(cold_start::fallback_after(&b)),
                        ),
                    ],
                )
            }
            "payments" => {
                let s = &setup.slow;
                let a = slow::run_one(s, &live)?;
                let b = slow::run_one(s, &candidate)?;
                let trip = |r: &slow::SlowRun| {
                    r.trip_after.map_or_else(
                        || "never".to_owned(),
                        |d| format!("{:.1} s", d.as_secs_f64()),
                    )
                };
                (
                    "3 slow, not down",
                    vec![
                        fig("opened after the slowdown", trip(&a), trip(&b)),
                        fig(
                            "shared pool busy while slow",
                            pct(a.utilization),
                            pct(b.utilization),
                        ),
                        fig(
                            "checkouts answered within 2 s",
                            pct(a.checkout_answered),
                            pct(b.checkout_answered),
                        ),
                        fig(
                            "other requests shed",
                            pct(a.others_shed),
                            pct(b.others_shed),
                        ),
                    ],
                )
            }
            _ => {
                let s = &setup.semian;
                let a = semian::run_one(s, &live)?;
                let b = semian::run_one(s, &candidate)?;
                (
                    "4 semian",
                    vec![
                        fig("requests shed (2 threads)", pct(a.shed), pct(b.shed)),
                        fig(
                            "threads busy on failing instances",
                            pct(a.measured),
                            pct(b.measured),
                        ),
                        fig(
                            "predicted extra utilization",
                            pct(a.predicted),
                            pct(b.predicted),
                        ),
                    ],
                )
            }
        };
        runs.push(CandidateRun {
            replay,
            breaker: name,
            overrides: overrides
                .pairs_for(name)
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            figures,
        });
    }
    Ok(runs)
}

/// The runs as a table of figures, live beside candidate.
///
/// ```
/// use fusebox_sim::replay::candidate::table;
/// assert!(table(&[]).contains("live"));
/// ```
pub fn table(runs: &[CandidateRun]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{:<52} {:>16} {:>16}", "", "live", "candidate");
    for r in runs {
        let given: Vec<String> = r
            .overrides
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let _ = writeln!(out, "{} (`{}`: {})", r.replay, r.breaker, given.join(", "));
        for f in &r.figures {
            let _ = writeln!(out, "  {:<50} {:>16} {:>16}", f.what, f.live, f.candidate);
        }
    }
    out
}

/// Why a candidate could not be replayed: a bad override, or the run itself.
///
/// ```
/// use fusebox_sim::replay::candidate::{candidates, CandidateError};
/// use fusebox_sim::{replay::Setup, Overrides};
/// let e = candidates(&Setup::default(), &Overrides::parse("nope.open_for=1s").unwrap()).unwrap_err();
/// assert!(matches!(e, CandidateError::Override(_)));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum CandidateError {
    /// An override refused or naming no replay's breaker.
    Override(OverrideError),
    /// The replay failed.
    Io(io::Error),
}

impl std::fmt::Display for CandidateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CandidateError::Override(e) => e.fmt(f),
            CandidateError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CandidateError {}

impl From<OverrideError> for CandidateError {
    fn from(e: OverrideError) -> Self {
        CandidateError::Override(e)
    }
}

impl From<io::Error> for CandidateError {
    fn from(e: io::Error) -> Self {
        CandidateError::Io(e)
    }
}

fn fig(what: &'static str, live: impl ToString, candidate: impl ToString) -> Figure {
    Figure {
        what,
        live: live.to_string(),
        candidate: candidate.to_string(),
    }
}

fn pct(x: f64) -> String {
    format!("{:.1} %", x * 100.0)
}

fn hms(d: Option<Duration>) -> String {
    let Some(d) = d else {
        return "never".to_owned();
    };
    let t = d.as_secs_f64().round() as u64;
    format!("{}h {:02}m {:02}s", t / 3600, t / 60 % 60, t % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pairs are the replays' own settings: the live run is the write-up's run.
    #[test]
    fn the_live_pairs_are_the_replays_builders() {
        let builders = [
            cold_start::old_breaker(),
            slow::error_only_breaker(),
            semian::before_breaker(),
        ];
        for ((name, pairs), b) in LIVE.iter().zip(builders) {
            let from_pairs = Overrides::new().apply(name, pairs).unwrap();
            assert_eq!(from_pairs.config().unwrap(), b.config().unwrap(), "{name}");
        }
    }
}
