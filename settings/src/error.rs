//! [`ConfigError`]: every refusal of a setting, and the one message each entry point shows.

use std::fmt;

use crate::keys::{self, Key, Kind};
use crate::suggest::{hint, suggest};

/// An invalid setting. The builders return it instead of panicking, text parsing returns it
/// for a bad value, and the attribute macros show its message at the offending token.
///
/// ```
/// use fusebox::settings::ConfigError;
/// use fusebox::Breaker;
/// let err = Breaker::builder("config-error-doc").failure_rate(0).config().unwrap_err();
/// assert!(matches!(err, ConfigError::OutOfRange { field: "failure_rate", .. }));
/// assert_eq!(
///     err.to_string(),
///     "`failure_rate` = 0 is out of range: expected a percentage from 1 to 100"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// A setting outside its allowed range, a value that is not a number, or (with an
    /// empty `value`) a setting that another one needs and that was not given.
    OutOfRange {
        /// The setting.
        field: &'static str,
        /// The value given, as text; empty when the setting is missing.
        value: String,
        /// What would be accepted.
        expected: &'static str,
    },
    /// A duration of zero where a positive one is needed.
    ZeroDuration {
        /// The setting.
        field: &'static str,
    },
    /// Two settings that exclude each other were both given (or one was given twice).
    Conflict {
        /// The first setting.
        first: &'static str,
        /// The second setting.
        second: &'static str,
    },
    /// An empty or otherwise unusable name.
    BadName {
        /// The name given.
        name: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// A key that is not a setting (from text: a settings file or the environment).
    UnknownSetting {
        /// The key given.
        key: String,
    },
    /// A key that is not a setting of a retry (from text).
    UnknownRetrySetting {
        /// The key given.
        key: String,
    },
    /// A duration string that does not parse (`"800ms"`, `"3s"`, `"1m30s"` are accepted).
    BadDuration {
        /// The text given.
        text: String,
    },
}

impl ConfigError {
    /// The keys, as written in an attribute or in text, that this error is about; the
    /// attribute macros point at the last of them that the user wrote. A missing setting
    /// names the keys that need it, a rule on `trip_pNN` names all four `trip_p*` keys.
    ///
    /// ```
    /// use fusebox_settings::RawSettings;
    /// let mut raw = RawSettings::new();
    /// raw.set_text("slow", "500ms").unwrap();
    /// assert_eq!(raw.check().unwrap_err().keys(), ["slow"]);
    /// ```
    pub fn keys(&self) -> Vec<&'static str> {
        match self {
            ConfigError::OutOfRange { field, value, .. } if value.is_empty() => {
                keys::needed_by(field).to_vec()
            }
            ConfigError::OutOfRange { field, .. } => keys::written_as(field).to_vec(),
            ConfigError::ZeroDuration { field } => keys::written_as(field).to_vec(),
            ConfigError::Conflict { first, second } => {
                let mut all = keys::written_as(first).to_vec();
                all.extend_from_slice(keys::written_as(second));
                all
            }
            ConfigError::BadName { .. }
            | ConfigError::UnknownSetting { .. }
            | ConfigError::UnknownRetrySetting { .. }
            | ConfigError::BadDuration { .. } => Vec::new(),
        }
    }

    /// The error for a value of `key` that is not text at all (an environment variable that
    /// is not UTF-8): `OutOfRange` for a setting, `UnknownSetting` for any other key.
    ///
    /// ```
    /// use fusebox_settings::ConfigError;
    /// let e = ConfigError::not_text("timeout", "\u{fffd}".into());
    /// assert!(matches!(e, ConfigError::OutOfRange { field: "timeout", expected: "UTF-8 text", .. }));
    /// ```
    pub fn not_text(key: &str, lossy: String) -> ConfigError {
        match Key::from_name(key) {
            Some(k) => ConfigError::OutOfRange {
                field: k.name(),
                value: lossy,
                expected: "UTF-8 text",
            },
            None => ConfigError::UnknownSetting { key: key.into() },
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::OutOfRange {
                field, expected, ..
            } if self_is_missing(self) => write!(f, "`{field}` is missing: {expected}"),
            ConfigError::OutOfRange {
                field,
                value,
                expected,
            } if not_a_number(field, value) => write!(f, "`{field}` takes {expected}, not {value}"),
            ConfigError::OutOfRange {
                field,
                value,
                expected,
            } => write!(
                f,
                "`{field}` = {value} is out of range: expected {expected}"
            ),
            ConfigError::ZeroDuration { field } => {
                write!(f, "`{field}` must be longer than zero, like \"100ms\"")
            }
            ConfigError::Conflict {
                first: "trip_pNN",
                second: "trip_pNN",
            } => write!(
                f,
                "two `trip_pNN` rules cannot be used together: {}",
                keys::conflict_reason("trip_pNN", "trip_pNN").unwrap_or_default()
            ),
            ConfigError::Conflict { first, second } => {
                write!(f, "`{first}` and `{second}` cannot be used together")?;
                match keys::conflict_reason(first, second) {
                    Some(why) => write!(f, ": {why}"),
                    None => Ok(()),
                }
            }
            ConfigError::BadName { name, reason } => write!(f, "bad name {name:?}: {reason}"),
            ConfigError::UnknownSetting { key } => {
                write!(f, "unknown setting `{key}`")?;
                match unknown_of(key) {
                    Some((keys, of)) => {
                        write!(
                            f,
                            "{}: expected one of {}",
                            hint(key, keys),
                            keys.join(", ")
                        )?;
                        f.write_str(of)
                    }
                    None => write!(
                        f,
                        ": expected one of a breaker's settings ({}) or a bulkhead's ({})",
                        keys::KEYS.join(", "),
                        keys::BULKHEAD_KEYS.join(", ")
                    ),
                }
            }
            ConfigError::UnknownRetrySetting { key } => write!(
                f,
                "unknown setting `{key}` of a retry{}: expected one of {}",
                hint(key, &keys::RETRY_KEYS),
                keys::RETRY_KEYS.join(", ")
            ),

            ConfigError::BadDuration { text } => {
                write!(f, "bad duration {text:?}: ")?;
                if let Some(why) = crate::duration::diagnose(text) {
                    write!(f, "{why}; ")?;
                }
                write!(f, "expected {}", crate::duration::EXPECTED)
            }
        }
    }
}

/// Whose keys an unknown `key` was refused among. One variant serves a breaker's and a
/// bulkhead's text (users match `UnknownSetting` for both), so the kind is told from the key:
/// a breaker's key was refused by a bulkhead and a bulkhead's by a breaker, a near miss is
/// near its kind's key; `None` when nothing tells (both lists are then given).
fn unknown_of(key: &str) -> Option<(&'static [&'static str], &'static str)> {
    let (breaker, bulkhead): (&[&str], &[&str]) = (&keys::KEYS, &keys::BULKHEAD_KEYS);
    let of_bulkhead = Some((bulkhead, " (a bulkhead's settings)"));
    if breaker.contains(&key) {
        return of_bulkhead;
    }
    if bulkhead.contains(&key) || suggest(key, breaker).is_some() {
        return Some((breaker, ""));
    }
    suggest(key, bulkhead).and(of_bulkhead)
}

/// A value of a whole-number key that is no whole number at all (`50.5` for a percentage,
/// `fifty`): said as the attribute says a literal of the wrong kind, not as out of range.
fn not_a_number(field: &str, value: &str) -> bool {
    let whole = matches!(
        Key::from_name(field).map(Key::kind),
        Some(Kind::Percent | Kind::Count { .. } | Kind::Upto { .. })
    );
    whole && value.parse::<i128>().is_err()
}

fn self_is_missing(e: &ConfigError) -> bool {
    matches!(e, ConfigError::OutOfRange { value, .. } if value.is_empty())
}

impl std::error::Error for ConfigError {}
