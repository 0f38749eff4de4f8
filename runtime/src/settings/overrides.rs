//! [`Overrides`]: settings given at start outside the code, by name or by pattern, from the
//! environment or from a configuration the service loads (issue 29). The registry applies
//! them (`Registry::apply_overrides`); this layer only reads and names them.

use std::fmt;

use fusebox_settings::{check_name, ConfigError, RawBulkheadSettings, RawSettings, Source};

/// What an override is for.
///
/// ```
/// use fusebox_runtime::GuardKind;
/// assert_eq!(GuardKind::Bulkhead.to_string(), "bulkhead");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(rename_all = "snake_case")
)]
pub enum GuardKind {
    /// A circuit breaker (`#[breaker]`, `Breaker::builder`).
    Breaker,
    /// A bulkhead (`#[bulkhead]`, `Bulkhead::builder`).
    Bulkhead,
}

impl fmt::Display for GuardKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GuardKind::Breaker => "breaker",
            GuardKind::Bulkhead => "bulkhead",
        })
    }
}

/// One override: settings for every breaker (or bulkhead) whose name `name` matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) target: GuardKind,
    /// A name, or a pattern with `*` (any run of characters, `/` and `::` included).
    pub(crate) name: String,
    pub(crate) pairs: Vec<(String, String)>,
    pub(crate) source: Source,
}

impl Entry {
    /// Whether `name` is one this entry is for.
    pub(crate) fn matches(&self, name: &str) -> bool {
        glob(&self.name, name)
    }
    /// How specific the entry is: an exact name above every pattern, then the pattern with
    /// more literal characters. Matching entries apply from the least specific up, so the
    /// most specific one's value of a key wins.
    pub(crate) fn rank(&self) -> (bool, usize) {
        (
            !self.name.contains('*'),
            self.name.chars().filter(|c| *c != '*').count(),
        )
    }
}

/// The entries of `rules` for `name`, least specific first (stable: among equally specific
/// ones, the one given last stays last), so the last value of a key is the one that wins.
pub(crate) fn ranked<'a>(rules: &'a [Entry], target: GuardKind, name: &str) -> Vec<&'a Entry> {
    let mut matching: Vec<&Entry> = rules
        .iter()
        .filter(|e| e.target == target && e.matches(name))
        .collect();
    matching.sort_by_key(|e| e.rank());
    matching
}

/// `*` matches any run of characters (none too), everything else itself.
fn glob(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for p in middle {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Settings given at start outside the code: per breaker and per bulkhead, by name or by
/// pattern, each checked by the settings table when the registry applies it
/// ([`Registry::apply_overrides`](crate::Registry::apply_overrides)).
///
/// **Names and patterns.** An override names a breaker (`"payments"`, `"billing::charge"`,
/// a keyed breaker's `"payments/eu"`) or a bulkhead, or gives a pattern where `*` stands for
/// any run of characters, `/` and `::` included: `"payments/*"` is every key of the keyed
/// breaker `payments` (and its `payments/_overflow`), `"billing::*"` every breaker of the
/// module `billing` and below (a name left to its default is the function's path), `"*"`
/// every breaker. Where several match one name, the exact name's value of a key wins, then
/// the pattern with more literal characters, then the one given last.
///
/// **Values** are text as the attribute writes them (`"800ms"`, `"30"`); a configuration
/// file may give numbers as numbers.
///
/// **From a configuration file** (feature `serde`): any format serde reads, with a
/// `breakers` and a `bulkheads` table, each a map from name or pattern to settings. In TOML:
///
/// ```toml
/// [breakers."payments/*"]
/// failure_rate = 30
/// [breakers."billing::charge"]
/// timeout = "2s"
/// [bulkheads.db]
/// pool = 40
/// ```
///
/// **From the environment** ([`from_env`](Self::from_env)): one variable per breaker or
/// bulkhead, named `FUSEBOX_BREAKER` or `FUSEBOX_BULKHEAD`, alone or followed by `_` and any
/// label of your own, whose value is the name (or pattern), then `;`-separated `key=value`
/// pairs: `FUSEBOX_BREAKER_PAYMENTS="payments/*; failure_rate=30; timeout=2s"`. The name
/// ends at the first `;`, so any name (with `/`, `::`, `-`, `*`) fits in a variable's value,
/// where a variable's name could not hold it.
///
/// ```
/// use fusebox_runtime::Overrides;
/// let o = Overrides::from_vars([
///     ("FUSEBOX_BREAKER_PAY", "payments/*; failure_rate=30; timeout=2s"),
///     ("FUSEBOX_BULKHEAD", "db-pool; pool=40"),
///     ("PATH", "/usr/bin"),
/// ])
/// .unwrap();
/// assert_eq!(o.len(), 2);
/// let e = Overrides::from_vars([("FUSEBOX_BREAKER", "payments; timeout")]).unwrap_err();
/// assert_eq!((e.name.as_str(), e.key.as_str()), ("payments", "timeout"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct Overrides {
    pub(crate) entries: Vec<Entry>,
}

impl Overrides {
    /// No override.
    pub fn new() -> Overrides {
        Overrides::default()
    }

    /// Adds settings for the breakers `name` (a name or a pattern) names, from `source`.
    ///
    /// ```
    /// use fusebox_runtime::{Overrides, Source};
    /// let o = Overrides::new().breaker("payments", [("timeout", "2s")], Source::File);
    /// assert!(!o.is_empty());
    /// ```
    pub fn breaker<K, V>(
        self,
        name: impl Into<String>,
        pairs: impl IntoIterator<Item = (K, V)>,
        source: Source,
    ) -> Overrides
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        self.entry(GuardKind::Breaker, name.into(), pairs, source)
    }

    /// Adds settings for the bulkheads `name` (a name or a pattern) names, from `source`.
    ///
    /// ```
    /// use fusebox_runtime::{Overrides, Source};
    /// let o = Overrides::new().bulkhead("db", [("pool", "40")], Source::Env);
    /// assert_eq!(o.len(), 1);
    /// ```
    pub fn bulkhead<K, V>(
        self,
        name: impl Into<String>,
        pairs: impl IntoIterator<Item = (K, V)>,
        source: Source,
    ) -> Overrides
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        self.entry(GuardKind::Bulkhead, name.into(), pairs, source)
    }

    pub(super) fn entry<K, V>(
        mut self,
        target: GuardKind,
        name: String,
        pairs: impl IntoIterator<Item = (K, V)>,
        source: Source,
    ) -> Overrides
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let pairs = pairs
            .into_iter()
            .map(|(k, v)| (k.as_ref().trim().to_owned(), v.as_ref().trim().to_owned()))
            .collect();
        self.entries.push(Entry {
            target,
            name: name.trim().to_owned(),
            pairs,
            source,
        });
        self
    }

    /// `self`, then `later`'s overrides, which win where both give a key for one name: for
    /// a file, then the environment on top, `Overrides::from(file).and(Overrides::from_env()?)`.
    ///
    /// ```
    /// use fusebox_runtime::{Overrides, Source};
    /// let file = Overrides::new().breaker("payments", [("timeout", "2s")], Source::File);
    /// let env = Overrides::new().breaker("payments", [("timeout", "3s")], Source::Env);
    /// assert_eq!(file.and(env).len(), 2);
    /// ```
    pub fn and(mut self, later: Overrides) -> Overrides {
        self.entries.extend(later.entries);
        self
    }

    /// The number of names and patterns given.
    ///
    /// ```
    /// use fusebox_runtime::Overrides;
    /// assert_eq!(Overrides::new().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No override given.
    ///
    /// ```
    /// use fusebox_runtime::Overrides;
    /// assert!(Overrides::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The settings pairs these overrides give the breaker (or bulkhead) `name`, as
    /// [`Registry::apply_overrides`](crate::Registry::apply_overrides) layers them: from every
    /// matching entry, the exact name's value of a key winning, then the pattern with more
    /// literal characters, then the one given last. Unchecked, as given. What a replay of the
    /// simulator (`fusebox_sim::Overrides::with_settings_overrides`) takes, so a candidate is
    /// tried there in the very form it will be given at start.
    ///
    /// ```
    /// use fusebox_runtime::{GuardKind, Overrides, Source};
    /// let o = Overrides::new()
    ///     .breaker("payments/*", [("timeout", "2s"), ("failure_rate", "30")], Source::File)
    ///     .breaker("payments/eu", [("timeout", "3s")], Source::Env);
    /// let eu = o.pairs_for(GuardKind::Breaker, "payments/eu");
    /// assert_eq!(eu, [("failure_rate".to_owned(), "30".to_owned()), ("timeout".to_owned(), "3s".to_owned())]);
    /// assert!(o.pairs_for(GuardKind::Bulkhead, "payments/eu").is_empty());
    /// ```
    pub fn pairs_for(&self, target: GuardKind, name: &str) -> Vec<(String, String)> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for e in ranked(&self.entries, target, name) {
            for (k, v) in &e.pairs {
                pairs.retain(|(pk, _)| pk != k);
                pairs.push((k.clone(), v.clone()));
            }
        }
        pairs
    }

    /// Every override attributed to `source` (a file read by hand, say).
    ///
    /// ```
    /// use fusebox_runtime::{Overrides, Source};
    /// let o = Overrides::new().breaker("a", [("timeout", "1s")], Source::File).with_source(Source::Env);
    /// assert_eq!(o.len(), 1);
    /// ```
    pub fn with_source(mut self, source: Source) -> Overrides {
        for e in &mut self.entries {
            e.source = source;
        }
        self
    }

    /// Reads `FUSEBOX_BREAKER*` and `FUSEBOX_BULKHEAD*` from the environment (the format is
    /// [`Overrides`]'); each value parsed, not yet checked against a breaker's settings.
    ///
    /// ```
    /// use fusebox_runtime::Overrides;
    /// // With no FUSEBOX_BREAKER* / FUSEBOX_BULKHEAD* variables set, there is nothing to apply.
    /// let o = Overrides::from_env().unwrap();
    /// # let _ = o;
    /// ```
    // A start-time error that names the breaker, key and value in full: its size is no cost.
    #[allow(clippy::result_large_err)]
    pub fn from_env() -> Result<Overrides, OverrideError> {
        let vars = std::env::vars_os().map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        });
        Overrides::from_vars(vars)
    }

    /// [`from_env`](Self::from_env) over given variables; others are ignored. A value that
    /// is not `name; key=value; ...` is an [`OverrideError`] naming it.
    // A start-time error that names the breaker, key and value in full: its size is no cost.
    #[allow(clippy::result_large_err)]
    pub fn from_vars<K, V>(
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Overrides, OverrideError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut o = Overrides::new();
        for (k, v) in vars {
            let var = k.as_ref();
            let target = if is_var(var, "FUSEBOX_BREAKER") {
                GuardKind::Breaker
            } else if is_var(var, "FUSEBOX_BULKHEAD") {
                GuardKind::Bulkhead
            } else {
                continue;
            };
            let mut parts = v.as_ref().split(';');
            let name = parts.next().unwrap_or_default().trim().to_owned();
            let mut pairs = Vec::new();
            for part in parts.map(str::trim).filter(|p| !p.is_empty()) {
                let Some((key, value)) = part.split_once('=') else {
                    return Err(OverrideError {
                        target,
                        name,
                        given_as: None,
                        key: part.to_owned(),
                        value: String::new(),
                        source: Source::Env,
                        reason: ConfigError::OutOfRange {
                            field: "override",
                            value: part.to_owned(),
                            expected: "`key=value` pairs after the name, separated by `;`",
                        },
                    });
                };
                pairs.push((key.trim().to_owned(), value.trim().to_owned()));
            }
            o = o.entry(target, name, pairs, Source::Env);
        }
        o.check_text()?;
        Ok(o)
    }

    /// Each entry's name and each value on its own (the table's verdict on one key); rules
    /// between keys wait for the settings each override lies on.
    // A start-time error that names the breaker, key and value in full: its size is no cost.
    #[allow(clippy::result_large_err)]
    pub(crate) fn check_text(&self) -> Result<(), OverrideError> {
        for e in &self.entries {
            check_name(&e.name).map_err(|reason| e.error(String::new(), String::new(), reason))?;
            let mut breaker = RawSettings::new();
            let mut bulkhead = RawBulkheadSettings::new();
            for (k, v) in &e.pairs {
                let r = match e.target {
                    GuardKind::Breaker => breaker.set_text(k, v),
                    GuardKind::Bulkhead => bulkhead.set_text(k, v),
                };
                r.map_err(|reason| e.error(k.clone(), v.clone(), reason))?;
            }
        }
        Ok(())
    }
}

fn is_var(var: &str, base: &str) -> bool {
    var.strip_prefix(base)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('_'))
}

impl Entry {
    /// An error about this entry: `key` and `value`, or, when empty, the ones of `reason`'s
    /// keys it gave (a rule between keys names the one the override wrote).
    pub(crate) fn error(&self, key: String, value: String, reason: ConfigError) -> OverrideError {
        let (key, value) = if key.is_empty() && !self.pairs.is_empty() {
            let named = reason.keys();
            self.pairs
                .iter()
                .rev()
                .find(|(k, _)| named.contains(&k.as_str()))
                .or(self.pairs.last())
                .cloned()
                .unwrap_or_default()
        } else {
            (key, value)
        };
        OverrideError {
            target: self.target,
            name: self.name.clone(),
            given_as: None,
            key,
            value,
            source: self.source,
            reason,
        }
    }
}

/// A bad override: which breaker or bulkhead (name or pattern), which key and value, where it
/// came from, and the settings table's reason, in its words. Never a panic, never ignored.
///
/// ```
/// use fusebox_runtime::{registry, Breaker, ConfigError, GuardKind, Overrides, Source};
/// Breaker::builder("override-error-doc").build().unwrap();
/// let o = Overrides::new().breaker("override-error-doc", [("failure_rate", "0")], Source::Env);
/// let e = registry().apply_overrides(&o).unwrap_err();
/// assert_eq!((e.target, e.name.as_str(), e.key.as_str(), e.value.as_str()),
///            (GuardKind::Breaker, "override-error-doc", "failure_rate", "0"));
/// assert!(matches!(e.reason, ConfigError::OutOfRange { field: "failure_rate", .. }));
/// assert!(e.to_string().contains("breaker `override-error-doc`"));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OverrideError {
    /// A breaker's override or a bulkhead's.
    pub target: GuardKind,
    /// The breaker or bulkhead refused: its name (or the name or pattern given, when the
    /// error is in the override's text itself).
    pub name: String,
    /// The pattern (or other name) the override was given as, when not `name` itself.
    pub given_as: Option<String>,
    /// The key refused (for a rule between keys, the one the override gave).
    pub key: String,
    /// Its value, as given.
    pub value: String,
    /// Where the override came from.
    pub source: Source,
    /// Why, in the settings table's words.
    pub reason: ConfigError,
}

impl fmt::Display for OverrideError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad override of {} `{}`", self.target, self.name)?;
        if let Some(p) = &self.given_as {
            write!(f, " (given as `{p}`)")?;
        }
        write!(
            f,
            " from {}: `{}` = {:?}: {}",
            self.source, self.key, self.value, self.reason
        )
    }
}

impl std::error::Error for OverrideError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.reason)
    }
}

/// What [`Registry::apply_overrides`](crate::Registry::apply_overrides) did: the settings
/// applied to each breaker and bulkhead, and the names no code declares.
///
/// ```
/// use fusebox_runtime::{registry, Overrides, Source};
/// let o = Overrides::new().breaker("applied-doc-nobody", [("timeout", "1s")], Source::Env);
/// let applied = registry().apply_overrides(&o).unwrap();
/// assert_eq!(applied.undeclared[0].name, "applied-doc-nobody");
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Applied {
    /// Each breaker and bulkhead whose settings changed, with the pairs applied to it.
    pub applied: Vec<AppliedTo>,
    /// Names and patterns that matched no breaker or bulkhead the code declares (also logged
    /// at WARN). A pattern is kept and applies to keys made later (a keyed breaker is known
    /// from its first key).
    pub undeclared: Vec<Undeclared>,
}

/// Settings applied to one breaker or bulkhead.
///
/// ```
/// use fusebox_runtime::{registry, Bulkhead, GuardKind, Overrides, Source};
/// Bulkhead::builder("applied-to-doc").pool(2).build().unwrap();
/// let o = Overrides::new().bulkhead("applied-to-doc", [("pool", "3")], Source::File);
/// let a = registry().apply_overrides(&o).unwrap();
/// assert_eq!(a.applied[0].target, GuardKind::Bulkhead);
/// assert_eq!(a.applied[0].pairs, [("pool".to_string(), "3".to_string())]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct AppliedTo {
    /// A breaker or a bulkhead.
    pub target: GuardKind,
    /// Its name.
    pub name: String,
    /// The pairs in force over the code's, from every matching override.
    pub pairs: Vec<(String, String)>,
}

/// An override's name or pattern that no declared breaker or bulkhead has.
///
/// ```
/// use fusebox_runtime::{registry, GuardKind, Overrides, Source};
/// let o = Overrides::new().bulkhead("undeclared-doc-pool", [("pool", "3")], Source::Env);
/// let u = &registry().apply_overrides(&o).unwrap().undeclared[0];
/// assert_eq!((u.target, u.name.as_str(), u.source), (GuardKind::Bulkhead, "undeclared-doc-pool", Source::Env));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Undeclared {
    /// A breaker's override or a bulkhead's.
    pub target: GuardKind,
    /// The name or pattern given.
    pub name: String,
    /// Where it came from.
    pub source: Source,
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn patterns_match_runs_of_any_characters() {
        assert!(glob("payments/*", "payments/eu"));
        assert!(glob("payments/*", "payments/_overflow"));
        assert!(!glob("payments/*", "payments"));
        assert!(!glob("payments/*", "payments-v2/eu"));
        assert!(glob("billing::*", "billing::invoices::charge"));
        assert!(glob("*", "anything"));
        assert!(glob("*-db", "orders-db"));
        assert!(glob("a*b*c", "a-x-b-y-c"));
        assert!(!glob("a*b*c", "a-x-c"));
        assert!(glob("exact", "exact") && !glob("exact", "exact2"));
    }
}
