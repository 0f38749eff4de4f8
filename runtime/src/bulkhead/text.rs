//! Bulkhead settings from text: `key = value` pairs (a config file's section) or environment
//! variables, as breakers have them (`settings/text.rs`). Each pair goes through
//! `RawBulkheadSettings::set_text`, the parser `#[bulkhead]` uses at compile time, so text gets
//! the attribute's verdict in the attribute's words.

use std::ffi::OsString;

use fusebox_settings::{ConfigError, BULKHEAD_KEYS};

use super::config::BulkheadBuilder;
use crate::settings::text::prefixed_pairs;

impl BulkheadBuilder {
    /// A builder for `name` configured from `(key, value)` pairs, keys as in
    /// [`BULKHEAD_KEYS`](fusebox_settings::BULKHEAD_KEYS): `pool`, `max_wait` (a duration like
    /// `"50ms"`), `limit` (`"adaptive"`), `min_pool`, `max_pool`. The first bad pair, else the
    /// first bad rule between keys (a pool is required), is the error.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::config::BulkheadBuilder;
    /// use fusebox::settings::ConfigError;
    /// let b = BulkheadBuilder::from_settings("db", [("pool", "20"), ("max_wait", "50ms")]).unwrap();
    /// let bulkhead = b.build_detached().unwrap();
    /// assert_eq!((bulkhead.pool(), bulkhead.config().max_wait()), (20, Duration::from_millis(50)));
    /// let e = BulkheadBuilder::from_settings("db", [("pool", "twenty")]).unwrap_err();
    /// assert!(e.to_string().contains("pool"), "{e}");
    /// ```
    pub fn from_settings<K, V>(
        name: impl Into<String>,
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Result<BulkheadBuilder, ConfigError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut b = BulkheadBuilder::new(name.into());
        for (k, v) in pairs {
            b.raw_mut().set_text(k.as_ref(), v.as_ref())?;
        }
        b.config()?;
        Ok(b)
    }

    /// A builder for `name` configured from environment variables `PREFIX_KEY` (upper case),
    /// e.g. `DB_POOL=20` for the prefix `"DB"` (or `"DB_"`); see
    /// [`from_settings`](Self::from_settings) for the keys. Other variables are ignored, and so
    /// are `PREFIX_` variables whose key is not a bulkhead setting (a breaker's `DB_TIMEOUT`
    /// beside it must not fail the config), with one WARN naming them.
    ///
    /// ```
    /// use fusebox::config::BulkheadBuilder;
    /// // A bulkhead needs a pool: with no FUSEBOX_DOC_BULKHEAD_POOL set, the error says so.
    /// let e = BulkheadBuilder::from_env("doc", "FUSEBOX_DOC_BULKHEAD").unwrap_err();
    /// assert!(e.to_string().contains("pool"), "{e}");
    /// ```
    pub fn from_env(name: impl Into<String>, prefix: &str) -> Result<BulkheadBuilder, ConfigError> {
        Self::from_vars(name, prefix, std::env::vars_os())
    }

    /// [`from_env`](Self::from_env) over given variables (for tests and other sources).
    ///
    /// ```
    /// use std::ffi::OsString;
    /// use fusebox::config::BulkheadBuilder;
    /// let vars = [
    ///     (OsString::from("DB_POOL"), OsString::from("8")),
    ///     (OsString::from("DB_TIMEOUT"), OsString::from("800ms")), // a breaker's: ignored
    /// ];
    /// let b = BulkheadBuilder::from_vars("db", "DB", vars).unwrap();
    /// assert_eq!(b.build_detached().unwrap().pool(), 8);
    /// ```
    pub fn from_vars(
        name: impl Into<String>,
        prefix: &str,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Result<BulkheadBuilder, ConfigError> {
        let pairs = prefixed_pairs("bulkhead", prefix, vars, &BULKHEAD_KEYS)?;
        Self::from_settings(name, pairs)
    }
}
