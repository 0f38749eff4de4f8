//! A candidate configuration as overrides: settings pairs by breaker name (issue 29), checked
//! by the runtime's settings table, so a replay can try a change before anyone tries it live.
//!
//! Each override is layered on a replay's own settings for that breaker, written as the same
//! pairs, through [`BreakerBuilder::from_settings`]: later pairs win, and every pair gets the
//! attribute's verdict in the attribute's words. [`Overrides::apply`] is the one place a
//! candidate is made (once the runtime has its own overrides type, it is the one function to
//! switch).

use std::fmt;

use fusebox_runtime::{BreakerBuilder, ConfigError};

/// Settings pairs by breaker name: `payments.trip_p95=500ms` is `("payments", "trip_p95",
/// "500ms")`.
///
/// ```
/// use fusebox_sim::Overrides;
/// let mut o = Overrides::new().breaker("redis", [("open_for", "30s")]);
/// o.set_arg("payments.trip_p95=500ms").unwrap();
/// assert_eq!(o.pairs_for("payments"), [("trip_p95", "500ms")]);
/// let b = o.apply("redis", &[("window_calls", "3"), ("open_for", "2s")]).unwrap();
/// assert_eq!(b.config().unwrap().open_for(), std::time::Duration::from_secs(30));
/// assert!(Overrides::new().set_arg("trip_p95=500ms").is_err(), "no breaker name");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    entries: Vec<(String, String, String)>,
}

/// Why an override was refused: a malformed `name.key=value`, a setting the settings table
/// refuses, or a breaker no replay has. Names the breaker, and the key and value when known.
///
/// ```
/// use fusebox_sim::{OverrideError, Overrides};
/// let o = Overrides::new().breaker("redis", [("failure_rate", "120")]);
/// let e = o.apply("redis", &[]).unwrap_err();
/// assert!(matches!(e, OverrideError::Refused { .. }));
/// assert!(e.to_string().contains("`redis` (failure_rate=120)"), "{e}");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum OverrideError {
    /// Not `name.key=value`.
    Malformed {
        /// What was given.
        given: String,
    },
    /// The settings table refused the candidate for this breaker.
    Refused {
        /// The breaker.
        breaker: String,
        /// The pairs given for it.
        pairs: Vec<(String, String)>,
        /// The table's verdict.
        error: ConfigError,
    },
    /// No replay has a breaker of this name.
    Unknown {
        /// The name given.
        breaker: String,
        /// The names the replays have.
        known: Vec<&'static str>,
    },
}

impl fmt::Display for OverrideError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OverrideError::Malformed { given } => write!(
                f,
                "`{given}` is not an override: expected breaker.key=value, e.g. payments.trip_p95=500ms"
            ),
            OverrideError::Refused {
                breaker,
                pairs,
                error,
            } => {
                let given: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
                write!(f, "override of `{breaker}` ({}): {error}", given.join(", "))
            }
            OverrideError::Unknown { breaker, known } => write!(
                f,
                "no replay has a breaker named `{breaker}` (they have: {})",
                known.join(", ")
            ),
        }
    }
}

impl std::error::Error for OverrideError {}

impl Overrides {
    /// No override.
    ///
    /// ```
    /// assert!(fusebox_sim::Overrides::new().is_empty());
    /// ```
    pub fn new() -> Overrides {
        Overrides::default()
    }

    /// These pairs for the breaker `name`, after any given before (a key given twice keeps
    /// the later value).
    ///
    /// ```
    /// use fusebox_sim::Overrides;
    /// let o = Overrides::new().breaker("redis", [("open_for", "2s")]).breaker("redis", [("open_for", "30s")]);
    /// let b = o.apply("redis", &[]).unwrap();
    /// assert_eq!(b.config().unwrap().open_for(), std::time::Duration::from_secs(30));
    /// ```
    pub fn breaker<K: AsRef<str>, V: AsRef<str>>(
        mut self,
        name: &str,
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Overrides {
        for (k, v) in pairs {
            let (k, v) = (k.as_ref().trim(), v.as_ref().trim());
            self.entries
                .retain(|(n, old, _)| n != name || !supersedes(k, old));
            self.entries
                .push((name.to_owned(), k.to_owned(), v.to_owned()));
        }
        self
    }

    /// The runtime's overrides (`fusebox::settings::Overrides`: from the environment's
    /// `FUSEBOX_BREAKER*` variables or the service's configuration file) for each of `names`,
    /// resolved as the runtime applies them (exact name, then the most literal pattern, then
    /// the last given), after any given before: the candidate a replay tries is then the very
    /// one a process would take at start.
    ///
    /// ```
    /// use fusebox_runtime::{Overrides as AtStart, Source};
    /// use fusebox_sim::replay::candidate::LIVE;
    /// let at_start = AtStart::new().breaker("redis", [("open_for", "30s")], Source::File);
    /// let names = LIVE.map(|(name, _)| name);
    /// let o = fusebox_sim::Overrides::new().with_settings_overrides(&at_start, &names);
    /// assert_eq!(o.pairs_for("redis"), [("open_for", "30s")]);
    /// assert!(o.pairs_for("payments").is_empty());
    /// ```
    pub fn with_settings_overrides(
        mut self,
        overrides: &fusebox_runtime::Overrides,
        names: &[&str],
    ) -> Overrides {
        for name in names {
            let pairs = overrides.pairs_for(fusebox_runtime::GuardKind::Breaker, name);
            if !pairs.is_empty() {
                self = self.breaker(name, pairs);
            }
        }
        self
    }

    /// One `name.key=value` (the breaker name is everything before the last `.` of the left
    /// side, so `module::fn.timeout=1s` works). Only the form is checked here; the value is
    /// checked with the rest of the breaker's settings in [`apply`](Self::apply).
    pub fn set_arg(&mut self, arg: &str) -> Result<(), OverrideError> {
        let malformed = || OverrideError::Malformed {
            given: arg.to_owned(),
        };
        let (lhs, value) = arg.split_once('=').ok_or_else(malformed)?;
        let (name, key) = lhs.trim().rsplit_once('.').ok_or_else(malformed)?;
        if name.is_empty() || key.is_empty() {
            return Err(malformed());
        }
        *self = std::mem::take(self).breaker(name, [(key, value)]);
        Ok(())
    }

    /// Overrides from text: `name.key=value` items separated by spaces or commas, as the
    /// replay example's `FUSEBOX_SIM_SET` variable holds them.
    ///
    /// ```
    /// use fusebox_sim::Overrides;
    /// let o = Overrides::parse("redis.open_for=30s, redis.half_open_timeout=50ms").unwrap();
    /// assert_eq!(o.names(), ["redis"]);
    /// ```
    pub fn parse(text: &str) -> Result<Overrides, OverrideError> {
        let mut o = Overrides::new();
        for item in text.split([' ', ',', '\n', '\t']).filter(|s| !s.is_empty()) {
            o.set_arg(item)?;
        }
        Ok(o)
    }

    /// True without any override.
    ///
    /// ```
    /// assert!(!fusebox_sim::Overrides::parse("redis.open_for=30s").unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The breakers named, in the order first given.
    ///
    /// ```
    /// let o = fusebox_sim::Overrides::parse("b.timeout=1s a.timeout=1s b.open_for=9s").unwrap();
    /// assert_eq!(o.names(), ["b", "a"]);
    /// ```
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for (n, _, _) in &self.entries {
            if !names.contains(&n.as_str()) {
                names.push(n);
            }
        }
        names
    }

    /// The pairs given for `name`, in order.
    ///
    /// ```
    /// let o = fusebox_sim::Overrides::parse("redis.open_for=30s").unwrap();
    /// assert_eq!(o.pairs_for("redis"), [("open_for", "30s")]);
    /// assert!(o.pairs_for("payments").is_empty());
    /// ```
    pub fn pairs_for(&self, name: &str) -> Vec<(&str, &str)> {
        self.entries
            .iter()
            .filter(|(n, _, _)| n == name)
            .map(|(_, k, v)| (k.as_str(), v.as_str()))
            .collect()
    }

    /// The breaker `name` with `code`'s settings (a replay's own, as pairs) and this
    /// candidate's pairs for it on top, checked by the settings table. A key overridden
    /// leaves the code's pairs (with the slow rule's other spellings, the other kind of window
    /// and the other half-open policy), since the table refuses a key given twice.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::WindowKind;
    /// let o = fusebox_sim::Overrides::parse("payments.trip_p95=500ms payments.half_open_pct=5 payments.window=30s").unwrap();
    /// let code = [("slow", "2s"), ("slow_rate", "10"), ("half_open_calls", "1"), ("window_calls", "20")];
    /// let c = o.apply("payments", &code).unwrap().config().unwrap();
    /// assert_eq!((c.slow().unwrap().bound, c.slow().unwrap().rate), (Duration::from_millis(500), 5));
    /// assert_eq!(c.window(), WindowKind::Time(Duration::from_secs(30)));
    /// ```
    pub fn apply(
        &self,
        name: &str,
        code: &[(&str, &str)],
    ) -> Result<BreakerBuilder, OverrideError> {
        let mine = self.pairs_for(name);
        // The settings table refuses a key given twice, so an overridden key leaves the
        // code's pairs; and so do the code's other spelling of the slow rule, its other kind
        // of window and its other half-open policy (a share for a while, or trials).
        let overridden = |key: &str| mine.iter().any(|(k, _)| supersedes(k, key));
        let kept = code.iter().copied().filter(|(k, _)| !overridden(k));
        BreakerBuilder::from_settings(name, kept.chain(mine.iter().copied())).map_err(|error| {
            OverrideError::Refused {
                breaker: name.to_owned(),
                pairs: mine
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
                error,
            }
        })
    }

    /// Every name given is one of `known`; else the first that is not, reported.
    ///
    /// ```
    /// let o = fusebox_sim::Overrides::parse("reddis.open_for=30s").unwrap();
    /// assert!(o.check_names(&["redis"]).unwrap_err().to_string().contains("reddis"));
    /// ```
    pub fn check_names(&self, known: &[&'static str]) -> Result<(), OverrideError> {
        match self.names().into_iter().find(|n| !known.contains(n)) {
            Some(n) => Err(OverrideError::Unknown {
                breaker: n.to_owned(),
                known: known.to_vec(),
            }),
            None => Ok(()),
        }
    }
}

/// The setting a key sets: the four `trip_pNN` keys and `slow` are one rule's bound.
fn slot(key: &str) -> &str {
    match key {
        "trip_p50" | "trip_p90" | "trip_p95" | "trip_p99" => "slow",
        k => k,
    }
}

/// Which half-open policy a key configures: `true` for a share of traffic for a while,
/// `false` for a number of trial calls.
fn half_open_policy(key: &str) -> Option<bool> {
    match key {
        "half_open_pct" | "half_open_window" => Some(true),
        "half_open_calls" => Some(false),
        _ => None,
    }
}

/// Whether setting `new` takes `old` away, as an override at start does in the runtime: the
/// same setting, the slow rule's other spelling, the other kind of window, or the other
/// half-open policy.
fn supersedes(new: &str, old: &str) -> bool {
    slot(new) == slot(old)
        || (old == "slow_rate" && new.starts_with("trip_p"))
        || matches!(
            (new, old),
            ("window", "window_calls") | ("window_calls", "window")
        )
        || half_open_policy(new).is_some_and(|p| half_open_policy(old) == Some(!p))
}
