//! The defaults' table: one row per figure, and its text form.

/// One figure of the issue's table: the defaults beside the best tuned configuration.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DefaultsRow {
    /// The replay.
    pub replay: &'static str,
    /// What is measured (its unit: s, %, or a count).
    pub measure: &'static str,
    /// The issue's target for the defaults.
    pub target: &'static str,
    /// The settings the defaults run was given.
    pub given: &'static str,
    /// The defaults' figure (`None`: never happened).
    pub defaults: Option<f64>,
    /// The best tuned configuration's figure, where the replay has one.
    pub tuned: Option<f64>,
    /// Whether the defaults reach the target.
    pub met: bool,
}

/// Rows of one replay run with one set of settings: each row names only its measure.
pub(super) struct Rows<'a> {
    rows: &'a mut Vec<DefaultsRow>,
    replay: &'static str,
    given: &'static str,
}

impl<'a> Rows<'a> {
    pub(super) fn new(
        rows: &'a mut Vec<DefaultsRow>,
        replay: &'static str,
        given: &'static str,
    ) -> Self {
        Rows {
            rows,
            replay,
            given,
        }
    }

    /// One figure: the defaults', the tuned (or earlier) one beside it, and whether the
    /// issue's target is met.
    pub(super) fn push(
        &mut self,
        measure: &'static str,
        target: &'static str,
        defaults: Option<f64>,
        tuned: Option<f64>,
        met: bool,
    ) {
        self.rows.push(DefaultsRow {
            replay: self.replay,
            measure,
            target,
            given: self.given,
            defaults,
            tuned,
            met,
        });
    }
}

/// The rows as a text table: replay, measure, target, the defaults' figure and the settings
/// they were given, the tuned figure, and whether the target is met.
///
/// ```
/// assert!(fusebox_sim::replay::defaults::table(&[]).starts_with("replay"));
/// ```
pub fn table(rows: &[DefaultsRow]) -> String {
    let fig = |v: Option<f64>| v.map_or_else(|| "never".to_owned(), |v| format!("{v:.2}"));
    let head = [
        "replay",
        "measure",
        "target",
        "defaults",
        "given",
        "best tuned",
        "met",
    ]
    .map(str::to_owned);
    let body: Vec<[String; 7]> = rows
        .iter()
        .map(|r| {
            [
                r.replay.to_owned(),
                r.measure.to_owned(),
                r.target.to_owned(),
                fig(r.defaults),
                r.given.to_owned(),
                r.tuned
                    .map_or_else(|| "-".to_owned(), |v| format!("{v:.2}")),
                if r.met { "yes" } else { "NO" }.to_owned(),
            ]
        })
        .collect();
    let mut widths = [0usize; 7];
    for r in std::iter::once(&head).chain(&body) {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |r: &[String; 7]| {
        let cells: Vec<String> = r
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w - c.chars().count())))
            .collect();
        cells.join("  ").trim_end().to_owned()
    };
    let mut out = line(&head);
    out.push('\n');
    out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 12));
    for r in &body {
        out.push('\n');
        out.push_str(&line(r));
    }
    out
}
