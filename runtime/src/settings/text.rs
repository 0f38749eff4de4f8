//! Breaker settings from text: `key = value` pairs (a config file's section) or environment
//! variables. Each pair goes through `RawSettings::set_text`, the parser `#[breaker]` uses at
//! compile time, so text gets the attribute's verdict in the attribute's words.

use std::ffi::OsString;

use fusebox_settings::{ConfigError, BREAKER_KEYS};

use super::builder::BreakerBuilder;

impl BreakerBuilder {
    /// A builder for `name` configured from `(key, value)` pairs, keys as in
    /// [`KEYS`](fusebox_settings::KEYS) (durations like `"800ms"` or `"500ns"`,
    /// percentages and counts as integers, `backoff` as a number). `slow` needs `slow_rate`,
    /// and `backoff` needs `open_for_max`. The first bad pair, else the first bad rule
    /// between keys, is the error.
    ///
    /// ```
    /// use fusebox::config::BreakerBuilder;
    /// use fusebox::settings::ConfigError;
    /// let b = BreakerBuilder::from_settings("payments", [("timeout", "800ms"), ("half_open_pct", "5")])
    ///     .unwrap();
    /// assert_eq!(b.config().unwrap().timeout(), Some(std::time::Duration::from_millis(800)));
    /// let e = BreakerBuilder::from_settings("payments", [("timeout", "800")]).unwrap_err();
    /// assert!(matches!(e, ConfigError::BadDuration { .. }));
    /// ```
    pub fn from_settings<K, V>(
        name: impl Into<String>,
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Result<BreakerBuilder, ConfigError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut b = BreakerBuilder::new(name);
        for (k, v) in pairs {
            b.raw.set_text(k.as_ref(), v.as_ref())?;
        }
        b.config()?;
        Ok(b)
    }

    /// A builder for `name` configured from environment variables `PREFIX_KEY` (upper case),
    /// e.g. `PAYMENTS_TIMEOUT=800ms` for the prefix `"PAYMENTS"` (or `"PAYMENTS_"`); see
    /// [`from_settings`](Self::from_settings) for the keys.
    /// Other variables are ignored, and so are `PREFIX_` variables whose key is not a breaker
    /// setting (another tool's `PAYMENTS_URL` must not fail the config), with one WARN naming
    /// them. Keys and values are trimmed, as in [`from_settings`](Self::from_settings).
    ///
    /// ```
    /// use fusebox::config::BreakerBuilder;
    /// // With no FUSEBOX_DOC_* variables set, the defaults apply.
    /// let b = BreakerBuilder::from_env("doc", "FUSEBOX_DOC").unwrap();
    /// assert_eq!(b.config().unwrap().failure_rate(), 50);
    /// ```
    pub fn from_env(name: impl Into<String>, prefix: &str) -> Result<BreakerBuilder, ConfigError> {
        Self::from_vars(name, prefix, std::env::vars_os())
    }

    /// [`from_env`](Self::from_env) over given variables (for tests and other sources).
    ///
    /// ```
    /// use std::ffi::OsString;
    /// use fusebox::config::BreakerBuilder;
    /// let vars = [(OsString::from("PAY_TIMEOUT"), OsString::from("500ns"))];
    /// let b = BreakerBuilder::from_vars("pay", "PAY", vars).unwrap();
    /// assert_eq!(b.config().unwrap().timeout(), Some(std::time::Duration::from_nanos(500)));
    /// ```
    pub fn from_vars(
        name: impl Into<String>,
        prefix: &str,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Result<BreakerBuilder, ConfigError> {
        let pairs = prefixed_pairs("breaker", prefix, vars, &BREAKER_KEYS)?;
        Self::from_settings(name, pairs)
    }
}

/// The `(key, value)` pairs of variables `PREFIX_KEY` whose key is one of `keys` (lower-cased,
/// trimmed), for a `what` ("breaker", "bulkhead"). Variables with the prefix but another key
/// are ignored with one WARN naming them (another tool's `PAYMENTS_URL`, or the other kind's
/// settings, must not fail the config); a value that is not text is the error.
pub(crate) fn prefixed_pairs(
    what: &str,
    prefix: &str,
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    keys: &[&str],
) -> Result<Vec<(String, String)>, ConfigError> {
    // "DB" and "DB_" both mean the variables `DB_KEY`: a prefix written with its separator
    // must not silently match nothing (a bulkhead would then fail with "`pool` is missing").
    let head = format!("{}_", prefix.strip_suffix('_').unwrap_or(prefix));
    let mut pairs = Vec::new();
    let mut unknown = Vec::new();
    for (k, v) in vars {
        let Some(var) = k.to_str().filter(|k| k.starts_with(&head)) else {
            continue;
        };
        let key = var[head.len()..].trim().to_ascii_lowercase();
        if !keys.contains(&key.as_str()) {
            unknown.push(var.to_owned());
            continue;
        }
        let Some(v) = v.to_str() else {
            return Err(ConfigError::not_text(
                &key,
                v.to_string_lossy().into_owned(),
            ));
        };
        pairs.push((key, v.to_owned()));
    }
    if !unknown.is_empty() {
        unknown.sort();
        tracing::warn!(
            prefix,
            ignored = ?unknown,
            "environment variables with the {what}'s prefix that are not its settings: ignored"
        );
    }
    Ok(pairs)
}

/// `(key, value)` pairs as given, each trimmed and owned: how every entry point that takes
/// settings as text (live changes, overrides, the fleet's changes) reads them.
pub(crate) fn trimmed_pairs<K, V>(pairs: impl IntoIterator<Item = (K, V)>) -> Vec<(String, String)>
where
    K: AsRef<str>,
    V: AsRef<str>,
{
    pairs
        .into_iter()
        .map(|(k, v)| (k.as_ref().trim().to_owned(), v.as_ref().trim().to_owned()))
        .collect()
}
