//! A bulkhead's settings: `pool` (required) and `max_wait`.

use std::time::Duration;

use crate::defaults;
use crate::keys::{self, Key, Value};
use crate::ConfigError;

/// The validated settings of one bulkhead.
///
/// ```
/// use std::time::Duration;
/// use fusebox_settings::RawBulkheadSettings;
/// let s = RawBulkheadSettings::new().pool(60).check().unwrap();
/// assert_eq!((s.pool(), s.max_wait()), (60, Duration::ZERO));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct BulkheadSettings {
    pub(crate) pool: usize,
    pub(crate) max_wait: Duration,
}

impl BulkheadSettings {
    /// Calls allowed in flight at once.
    pub fn pool(&self) -> usize {
        self.pool
    }
    /// How long a call waits for a free slot before it is rejected.
    pub fn max_wait(&self) -> Duration {
        self.max_wait
    }
    /// Settings that [`RawBulkheadSettings::check`] already accepted, rebuilt by generated
    /// code. Not a public API: the parts are not checked again.
    #[doc(hidden)]
    pub const fn __validated(pool: usize, max_wait: Duration) -> BulkheadSettings {
        BulkheadSettings { pool, max_wait }
    }
}

/// A bulkhead's settings as given; [`check`](Self::check) is the one verdict.
///
/// ```
/// use fusebox_settings::{ConfigError, RawBulkheadSettings};
/// let err = RawBulkheadSettings::new().check().unwrap_err();
/// assert!(matches!(err, ConfigError::OutOfRange { field: "pool", .. }));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[must_use]
pub struct RawBulkheadSettings {
    pool: Option<u64>,
    max_wait: Option<Duration>,
    texts: u8,
}

impl RawBulkheadSettings {
    /// Nothing given (`pool` is required).
    pub fn new() -> Self {
        Self::default()
    }
    /// Calls allowed in flight at once (1..=536 870 911).
    pub fn pool(mut self, n: usize) -> Self {
        self.pool = Some(u64::try_from(n).unwrap_or(u64::MAX));
        self
    }
    /// How long the next call may wait for a slot (default zero: fail at once).
    pub fn max_wait(mut self, d: Duration) -> Self {
        self.max_wait = Some(d);
        self
    }
    /// Sets `pool` or `max_wait` from text, as [`RawSettings::set_text`](crate::RawSettings::set_text).
    ///
    /// ```
    /// use fusebox_settings::RawBulkheadSettings;
    /// let mut raw = RawBulkheadSettings::new();
    /// raw.set_text("pool", "8").unwrap();
    /// raw.set_text("max_wait", "5ms").unwrap();
    /// assert_eq!(raw.check().unwrap().pool(), 8);
    /// ```
    pub fn set_text(&mut self, key: &str, text: &str) -> Result<(), ConfigError> {
        let k = Key::from_name(key)
            .filter(|k| keys::BULKHEAD_KEYS.contains(&k.name()))
            .ok_or_else(|| ConfigError::UnknownSetting { key: key.into() })?;
        let bit = if k == Key::Pool { 1 } else { 2 };
        if self.texts & bit != 0 {
            return Err(ConfigError::Conflict {
                first: k.name(),
                second: k.name(),
            });
        }
        let v = k.parse(text)?;
        self.texts |= bit;
        match v {
            Value::Int(n) => self.pool = Some(n),
            Value::Duration(d) => self.max_wait = Some(d),
            Value::Float(_) => unreachable!("no bulkhead key is a factor"),
        }
        Ok(())
    }
    /// Checks the settings.
    pub fn check(&self) -> Result<BulkheadSettings, ConfigError> {
        let pool = self.pool.ok_or_else(|| keys::missing("pool"))?;
        Key::Pool.check(Value::Int(pool))?;
        let max_wait = self.max_wait.unwrap_or(defaults::MAX_WAIT);
        Key::MaxWait.check(Value::Duration(max_wait))?;
        Ok(BulkheadSettings {
            pool: pool as usize,
            max_wait,
        })
    }
}
