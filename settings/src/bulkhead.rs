//! A bulkhead's settings: `pool` and `max_wait`, and for a pool that sizes itself
//! (`limit = "adaptive"`) its bounds `min_pool` and `max_pool`, `pool` being where it starts.

use std::time::Duration;

use crate::defaults;
use crate::keys::{self, Key, Value};
use crate::ConfigError;

/// How a bulkhead's pool is sized: fixed at `pool`, or moved by the dependency's latency
/// between `min_pool` and `max_pool` (the runtime documents the algorithm).
///
/// ```
/// use fusebox::settings::PoolLimit;
/// use fusebox::Bulkhead;
/// let s = Bulkhead::builder("pool-limit-doc").adaptive().max_pool(80).config().unwrap();
/// assert_eq!(s.limit(), PoolLimit::Adaptive { min_pool: 1, max_pool: 80 });
/// assert_eq!(s.pool(), 20, "the adaptive limit starts at 20 unless told");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub enum PoolLimit {
    /// `pool` calls in flight, always.
    #[default]
    Fixed,
    /// A limit that starts at `pool` and moves within these bounds.
    Adaptive {
        /// The lowest the limit goes.
        min_pool: usize,
        /// The highest the limit goes.
        max_pool: usize,
    },
}

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
    pub(crate) limit: PoolLimit,
}

impl BulkheadSettings {
    /// Calls allowed in flight at once (for an adaptive limit: where it starts).
    pub fn pool(&self) -> usize {
        self.pool
    }
    /// How long a call waits for a free slot before it is rejected.
    pub fn max_wait(&self) -> Duration {
        self.max_wait
    }
    /// Fixed, or adaptive within its bounds.
    pub fn limit(&self) -> PoolLimit {
        self.limit
    }
}

/// A bulkhead's settings as given; [`check`](Self::check) is the one verdict.
///
/// ```
/// use fusebox_settings::{ConfigError, RawBulkheadSettings};
/// let err = RawBulkheadSettings::new().check().unwrap_err();
/// assert!(matches!(err, ConfigError::OutOfRange { field: "pool", .. }));
/// let err = RawBulkheadSettings::new().adaptive().min_pool(10).max_pool(5).check().unwrap_err();
/// assert!(matches!(err, ConfigError::OutOfRange { field: "max_pool", .. }));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[must_use]
pub struct RawBulkheadSettings {
    pool: Option<u64>,
    max_wait: Option<Duration>,
    adaptive: Option<bool>,
    min_pool: Option<u64>,
    max_pool: Option<u64>,
    texts: u8,
}

fn count(n: usize) -> Option<u64> {
    Some(u64::try_from(n).unwrap_or(u64::MAX))
}

impl RawBulkheadSettings {
    /// Nothing given (`pool` is required unless the limit is adaptive).
    pub fn new() -> Self {
        Self::default()
    }
    /// Calls allowed in flight at once (1..=536 870 911); with [`adaptive`](Self::adaptive),
    /// the limit it starts at (default [`defaults::ADAPTIVE_START`], within the bounds).
    pub fn pool(mut self, n: usize) -> Self {
        self.pool = count(n);
        self
    }
    /// How long the next call may wait for a slot (default zero: fail at once).
    pub fn max_wait(mut self, d: Duration) -> Self {
        self.max_wait = Some(d);
        self
    }
    /// The pool sizes itself from the dependency's latency (`limit = "adaptive"`).
    pub fn adaptive(mut self) -> Self {
        self.adaptive = Some(true);
        self
    }
    /// The lowest an adaptive limit goes (default [`defaults::MIN_POOL`]).
    pub fn min_pool(mut self, n: usize) -> Self {
        self.min_pool = count(n);
        self
    }
    /// The highest an adaptive limit goes (default [`defaults::MAX_POOL_ADAPTIVE`]).
    pub fn max_pool(mut self, n: usize) -> Self {
        self.max_pool = count(n);
        self
    }
    /// Sets a bulkhead key from text, as [`RawSettings::set_text`](crate::RawSettings::set_text)
    /// does a breaker's (key and value trimmed first).
    ///
    /// ```
    /// use fusebox_settings::{PoolLimit, RawBulkheadSettings};
    /// let mut raw = RawBulkheadSettings::new();
    /// raw.set_text("pool", "8").unwrap();
    /// raw.set_text("max_wait", "5ms").unwrap();
    /// assert_eq!(raw.check().unwrap().pool(), 8);
    /// raw.set_text("limit", "adaptive").unwrap();
    /// raw.set_text("max_pool", "40").unwrap();
    /// assert_eq!(raw.check().unwrap().limit(), PoolLimit::Adaptive { min_pool: 1, max_pool: 40 });
    /// assert!(raw.set_text("limit", "elastic").is_err());
    /// let mut spaced = RawBulkheadSettings::new();
    /// spaced.set_text(" pool ", "5\n").unwrap();
    /// assert_eq!(spaced.check().unwrap().pool(), 5);
    /// ```
    pub fn set_text(&mut self, key: &str, text: &str) -> Result<(), ConfigError> {
        let (key, text) = keys::text_pair(key, text);
        let k = Key::from_name(key)
            .filter(|k| keys::BULKHEAD_KEYS.contains(&k.name()))
            .ok_or_else(|| ConfigError::UnknownSetting { key: key.into() })?;
        let index = keys::BULKHEAD_KEYS.iter().position(|n| *n == k.name());
        let bit = 1u8 << index.unwrap_or(7);
        if self.texts & bit != 0 {
            return Err(ConfigError::Conflict {
                first: k.name(),
                second: k.name(),
            });
        }
        let v = k.parse(text)?;
        self.texts |= bit;
        match (k, v) {
            (Key::Pool, Value::Int(n)) => self.pool = Some(n),
            (Key::MinPool, Value::Int(n)) => self.min_pool = Some(n),
            (Key::MaxPool, Value::Int(n)) => self.max_pool = Some(n),
            (Key::MaxWait, Value::Duration(d)) => self.max_wait = Some(d),
            (Key::Limit, Value::Word(w)) => self.adaptive = Some(w == "adaptive"),
            // `parse` gives each key its own kind of value.
            _ => {}
        }
        Ok(())
    }
    /// Checks the settings: each value's range, then `min_pool <= pool <= max_pool` for an
    /// adaptive limit (whose bounds a fixed pool refuses).
    pub fn check(&self) -> Result<BulkheadSettings, ConfigError> {
        let max_wait = self.max_wait.unwrap_or(defaults::MAX_WAIT);
        Key::MaxWait.check(Value::Duration(max_wait))?;
        for (k, v) in [
            (Key::Pool, self.pool),
            (Key::MinPool, self.min_pool),
            (Key::MaxPool, self.max_pool),
        ] {
            if let Some(n) = v {
                k.check(Value::Int(n))?;
            }
        }
        if self.adaptive != Some(true) {
            if self.min_pool.is_some() || self.max_pool.is_some() {
                return Err(keys::missing("limit"));
            }
            let pool = self.pool.ok_or_else(|| keys::missing("pool"))?;
            return Ok(BulkheadSettings {
                pool: pool as usize,
                max_wait,
                limit: PoolLimit::Fixed,
            });
        }
        let min = self.min_pool.unwrap_or(defaults::MIN_POOL as u64);
        let max = self.max_pool.unwrap_or(defaults::MAX_POOL_ADAPTIVE as u64);
        if max < min {
            return Err(ConfigError::OutOfRange {
                field: "max_pool",
                value: max.to_string(),
                expected: "a number of calls in flight of at least `min_pool`",
            });
        }
        let pool = match self.pool {
            Some(p) if p < min || p > max => {
                return Err(ConfigError::OutOfRange {
                    field: "pool",
                    value: p.to_string(),
                    expected: "a start from `min_pool` to `max_pool` for an adaptive limit",
                })
            }
            Some(p) => p,
            None => (defaults::ADAPTIVE_START as u64).clamp(min, max),
        };
        Ok(BulkheadSettings {
            pool: pool as usize,
            max_wait,
            limit: PoolLimit::Adaptive {
                min_pool: min as usize,
                max_pool: max as usize,
            },
        })
    }
}

// Layering (`overrides.rs`): kept here, beside the fields it reads.
impl RawBulkheadSettings {
    /// `self` with every key `over` holds written over it; `limit = "fixed"` drops the
    /// adaptive bounds.
    pub(crate) fn overlaid(mut self, over: &RawBulkheadSettings) -> RawBulkheadSettings {
        if over.adaptive == Some(false) {
            self.min_pool = None;
            self.max_pool = None;
        }
        self.pool = over.pool.or(self.pool);
        self.max_wait = over.max_wait.or(self.max_wait);
        self.adaptive = over.adaptive.or(self.adaptive);
        self.min_pool = over.min_pool.or(self.min_pool);
        self.max_pool = over.max_pool.or(self.max_pool);
        self
    }
}
