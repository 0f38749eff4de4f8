//! What applying [`Overrides`](super::overrides::Overrides) tells: [`OverrideError`] (which
//! breaker or bulkhead, key, value, source and the table's reason), and on success
//! [`Applied`] (what each override reached, and the names no code declares).

use std::fmt;

use fusebox_settings::{ConfigError, Source};

use super::overrides::{Entry, GuardKind};

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
/// use fusebox::{registry, Breaker};
/// use fusebox::settings::{ConfigError, GuardKind, Overrides, Source};
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
/// use fusebox::registry;
/// use fusebox::settings::{Overrides, Source};
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
/// use fusebox::{registry, Bulkhead};
/// use fusebox::settings::{GuardKind, Overrides, Source};
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
/// use fusebox::registry;
/// use fusebox::settings::{GuardKind, Overrides, Source};
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
