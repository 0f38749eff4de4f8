//! [`Overrides`]: settings given at start outside the code, by name or by pattern, from the
//! environment or from a configuration the service loads (issue 29). The registry applies
//! them (`Registry::apply_overrides`); this layer only reads and names them.

use std::fmt;

use fusebox_settings::{check_name, RawBulkheadSettings, RawSettings, Source};

// What applying them tells (`overrides_report.rs`), named here beside what it reports on.
pub use super::overrides_report::{Applied, AppliedTo, OverrideError, Undeclared};

/// What an override is for.
///
/// ```
/// use fusebox::settings::GuardKind;
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
    /// Whether `name` is one this entry is for: a name or pattern written as a path
    /// (`billing::charge`, `billing::*`) also matches a default name, the function's path,
    /// without its crate's name in front (`shop::billing::charge`).
    pub(crate) fn matches(&self, name: &str) -> bool {
        glob(&self.name, name)
            || without_crate(&self.name, name).is_some_and(|n| glob(&self.name, n))
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

/// `name` without its first path segment, when `written` is a path too: how a name or
/// pattern written from inside the crate (`billing::*`) meets a default name, which
/// `module_path!()` starts with the crate's name.
pub(crate) fn without_crate<'a>(written: &str, name: &'a str) -> Option<&'a str> {
    if !written.contains("::") {
        return None;
    }
    name.split_once("::").map(|(_, rest)| rest)
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
/// module `billing` and below (a name left to its default is the function's path, crate
/// first, and one written as a path matches it with or without the crate's name), `"*"`
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
/// use fusebox::settings::Overrides;
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
    /// use fusebox::settings::{Overrides, Source};
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
    /// use fusebox::settings::{Overrides, Source};
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
        let pairs = crate::settings::text::trimmed_pairs(pairs);
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
    /// use fusebox::settings::{Overrides, Source};
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
    /// use fusebox::settings::Overrides;
    /// assert_eq!(Overrides::new().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No override given.
    ///
    /// ```
    /// use fusebox::settings::Overrides;
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
    /// use fusebox::settings::{GuardKind, Overrides, Source};
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
    /// use fusebox::settings::{Overrides, Source};
    /// let o = Overrides::new().breaker("a", [("timeout", "1s")], Source::File).with_source(Source::Env);
    /// assert_eq!(o.len(), 1);
    /// ```
    pub fn with_source(mut self, source: Source) -> Overrides {
        for e in &mut self.entries {
            e.source = source;
        }
        self
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

#[cfg(test)]
mod tests {
    use super::{glob, Entry, GuardKind, Source};

    #[test]
    fn patterns_match_runs_of_any_characters() {
        assert!(glob("payments/*", "payments/eu"));
        assert!(glob("payments/*", "payments/_overflow"));
        assert!(!glob("payments/*", "payments"));
        assert!(!glob("payments/*", "payments-v2/eu"));
        assert!(glob("billing::*", "billing::invoices::charge"));
        let e = |name: &str| Entry {
            target: GuardKind::Breaker,
            name: name.into(),
            pairs: Vec::new(),
            source: Source::Env,
        };
        // A default name starts with the crate's name; a path written without it matches.
        assert!(e("billing::*").matches("shop::billing::invoices::charge"));
        assert!(e("billing::charge").matches("shop::billing::charge"));
        assert!(e("shop::billing::*").matches("shop::billing::charge"));
        // Only the first segment is the crate's: no match further in, nor for a plain word.
        assert!(!e("billing::*").matches("shop::admin::billing::charge"));
        assert!(!e("charge").matches("billing::charge"));
        assert!(glob("*", "anything"));
        assert!(glob("*-db", "orders-db"));
        assert!(glob("a*b*c", "a-x-b-y-c"));
        assert!(!glob("a*b*c", "a-x-c"));
        assert!(glob("exact", "exact") && !glob("exact", "exact2"));
    }
}
