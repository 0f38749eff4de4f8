//! Breaker settings from text: `key = value` pairs (a config file's section) or environment
//! variables, checked like the builder's, so a bad value is a typed error and never a panic.

use std::ffi::OsString;

use super::builder::BreakerBuilder;
use crate::duration::parse_duration;
use crate::error::ConfigError;
use crate::keys::KEYS;

fn number<T: std::str::FromStr>(
    field: &'static str,
    v: &str,
    expected: &'static str,
) -> Result<T, ConfigError> {
    v.parse().map_err(|_| ConfigError::OutOfRange {
        field,
        value: v.into(),
        expected,
    })
}

fn pair_missing(field: &'static str, needs: &'static str) -> ConfigError {
    ConfigError::OutOfRange {
        field,
        value: String::new(),
        expected: needs,
    }
}

impl BreakerBuilder {
    /// A builder for `name` configured from `(key, value)` pairs, keys as in [`KEYS`]
    /// (durations like `"800ms"`, percentages and counts as integers, `backoff` as a number).
    /// `slow` needs `slow_rate`, and `backoff` needs `open_for_max`.
    ///
    /// ```
    /// use fusebox_runtime::{BreakerBuilder, ConfigError};
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
        let mut seen = [false; KEYS.len()];
        let (mut slow, mut slow_rate, mut backoff, mut max) = (None, None, None, None);
        for (k, v) in pairs {
            let (k, v) = (k.as_ref(), v.as_ref());
            let Some(i) = KEYS.iter().position(|key| *key == k) else {
                return Err(ConfigError::UnknownSetting { key: k.into() });
            };
            let key = KEYS[i];
            if std::mem::replace(&mut seen[i], true) {
                return Err(ConfigError::Conflict {
                    first: key,
                    second: key,
                });
            }
            let pct = "a percentage from 1 to 100";
            let count = "a whole number of calls";
            let d = || parse_duration(v);
            b = match key {
                "failure_rate" => b.failure_rate(number(key, v, pct)?),
                "window" => b.window(d()?),
                "window_calls" => b.window_calls(number(key, v, count)?),
                "min_calls" => b.min_calls(number(key, v, count)?),
                "slow" => {
                    slow = Some(d()?);
                    b
                }
                "slow_rate" => {
                    slow_rate = Some(number(key, v, pct)?);
                    b
                }
                "trip_p50" => b.trip_p50(d()?),
                "trip_p90" => b.trip_p90(d()?),
                "trip_p95" => b.trip_p95(d()?),
                "trip_p99" => b.trip_p99(d()?),
                "timeout" => b.timeout(d()?),
                "half_open_timeout" => b.half_open_timeout(d()?),
                "open_for" => b.open_for(d()?),
                "backoff" => {
                    backoff = Some(number::<f64>(key, v, "a factor of at least 1.0")?);
                    b
                }
                "open_for_max" => {
                    max = Some(d()?);
                    b
                }
                "half_open_pct" => b.half_open_pct(number(key, v, pct)?),
                "half_open_window" => b.half_open_window(d()?),
                "half_open_calls" => b.half_open_calls(number(key, v, count)?),
                "max_keys" => b.max_keys(number(key, v, "a whole number of keys")?),
                _ => b.alert_after(d()?),
            };
        }
        b = match (slow, slow_rate) {
            (Some(bound), Some(rate)) => b.slow(bound, rate),
            (None, None) => b,
            (Some(_), None) => return Err(pair_missing("slow_rate", "given with `slow`")),
            (None, Some(_)) => return Err(pair_missing("slow", "given with `slow_rate`")),
        };
        b = match (backoff, max) {
            (Some(f), Some(m)) => b.backoff(f, m),
            (None, None) => b,
            (Some(_), None) => return Err(pair_missing("open_for_max", "given with `backoff`")),
            (None, Some(_)) => return Err(pair_missing("backoff", "given with `open_for_max`")),
        };
        b.config()?;
        Ok(b)
    }

    /// A builder for `name` configured from environment variables `PREFIX_KEY` (upper case),
    /// e.g. `PAYMENTS_TIMEOUT=800ms`; see [`from_settings`](Self::from_settings) for the keys.
    /// Other variables are ignored; a `PREFIX_` variable with an unknown key is an error.
    ///
    /// ```
    /// use fusebox_runtime::BreakerBuilder;
    /// // With no FUSEBOX_DOC_* variables set, the defaults apply.
    /// let b = BreakerBuilder::from_env("doc", "FUSEBOX_DOC").unwrap();
    /// assert_eq!(b.config().unwrap().failure_rate(), 50);
    /// ```
    pub fn from_env(name: impl Into<String>, prefix: &str) -> Result<BreakerBuilder, ConfigError> {
        Self::from_vars(name, prefix, std::env::vars_os())
    }

    /// [`from_env`](Self::from_env) over given variables (for tests and other sources).
    pub fn from_vars(
        name: impl Into<String>,
        prefix: &str,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Result<BreakerBuilder, ConfigError> {
        let head = format!("{prefix}_");
        let mut pairs = Vec::new();
        for (k, v) in vars {
            let Some(key) = k.to_str().and_then(|k| k.strip_prefix(&head)) else {
                continue;
            };
            let key = key.to_ascii_lowercase();
            let Some(v) = v.to_str() else {
                let field = KEYS.iter().find(|k| **k == key).copied();
                return Err(match field {
                    Some(field) => ConfigError::OutOfRange {
                        field,
                        value: v.to_string_lossy().into_owned(),
                        expected: "UTF-8 text",
                    },
                    None => ConfigError::UnknownSetting { key },
                });
            };
            pairs.push((key, v.to_owned()));
        }
        Self::from_settings(name, pairs)
    }
}
