//! A retry's settings: `attempts`, the wait between attempts (`backoff`, `backoff_max`), the
//! budget (`budget`, `budget_floor`, `budget_window`) and the deadline `total`, each judged by
//! its entry in the table as the breaker's are, so `#[retry]`, `Retry::builder` and text give
//! one verdict in the same words.

use std::time::Duration;

use crate::defaults;
use crate::keys::{text_pair, Key, Value, RETRY_KEYS};
use crate::ConfigError;

/// The validated settings of one retry policy.
///
/// ```
/// use std::time::Duration;
/// use fusebox_settings::{defaults, RawRetrySettings};
/// let s = RawRetrySettings::new().check().unwrap();
/// assert_eq!(s.attempts(), defaults::RETRY_ATTEMPTS);
/// assert_eq!((s.backoff(), s.backoff_max()), (Duration::from_millis(50), Duration::from_secs(2)));
/// assert_eq!(s.budget(), Some((20, 1, Duration::from_secs(10))), "a budget unless told otherwise");
/// assert_eq!(s.total(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RetrySettings {
    attempts: u32,
    backoff: Duration,
    backoff_max: Duration,
    budget: Option<(u8, u32, Duration)>,
    total: Option<Duration>,
}

impl RetrySettings {
    /// Attempts at most, the first included.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }
    /// The ceiling of the first retry's wait (full jitter: the wait is uniform below it).
    pub fn backoff(&self) -> Duration {
        self.backoff
    }
    /// The highest ceiling of a wait.
    pub fn backoff_max(&self) -> Duration {
        self.backoff_max
    }
    /// The budget as (share of calls in percent, retries a second whatever the traffic,
    /// window), or `None` for a retry without one.
    pub fn budget(&self) -> Option<(u8, u32, Duration)> {
        self.budget
    }
    /// The deadline of the whole call, attempts and waits included.
    pub fn total(&self) -> Option<Duration> {
        self.total
    }
}

/// A retry's settings as given; [`check`](Self::check) is the one verdict.
///
/// ```
/// use fusebox_settings::{ConfigError, RawRetrySettings};
/// let err = RawRetrySettings::new().attempts(11).check().unwrap_err();
/// assert_eq!(err.to_string(), "`attempts` = 11 is out of range: expected a number of attempts from 1 to 10");
/// let mut raw = RawRetrySettings::new();
/// raw.set_text("budget", "150").unwrap_err();
/// raw.set_text("budget_floor", "0").unwrap();
/// raw.set_text("total", "2s").unwrap();
/// assert_eq!(raw.check().unwrap().budget().map(|b| b.1), Some(0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[must_use]
pub struct RawRetrySettings {
    attempts: Option<u64>,
    backoff: Option<Duration>,
    backoff_max: Option<Duration>,
    budget: Option<u64>,
    budget_floor: Option<u64>,
    budget_window: Option<Duration>,
    total: Option<Duration>,
    unbudgeted: bool,
    /// Keys given as text, one bit per key of [`RETRY_KEYS`], to refuse a key given twice.
    texts: u8,
}

impl RawRetrySettings {
    /// Nothing given: [`check`](Self::check) returns the defaults.
    pub fn new() -> Self {
        Self::default()
    }
    /// Attempts at most, the first included (1..=10, default 3).
    pub fn attempts(mut self, n: u32) -> Self {
        self.attempts = Some(n.into());
        self
    }
    /// The ceiling of the first retry's wait (default 50 ms).
    pub fn backoff(mut self, d: Duration) -> Self {
        self.backoff = Some(d);
        self
    }
    /// The highest ceiling of a wait (default 2 s), at least `backoff`.
    pub fn backoff_max(mut self, d: Duration) -> Self {
        self.backoff_max = Some(d);
        self
    }
    /// The share of the name's calls that may be retries, in percent (0..=100, default 20).
    pub fn budget(mut self, pct: u8) -> Self {
        self.budget = Some(pct.into());
        self
    }
    /// Retries a second allowed whatever the traffic (0..=1000, default 1).
    pub fn budget_floor(mut self, per_s: u32) -> Self {
        self.budget_floor = Some(per_s.into());
        self
    }
    /// How far back the budget counts (default 10 s, at most 1 h).
    pub fn budget_window(mut self, d: Duration) -> Self {
        self.budget_window = Some(d);
        self
    }
    /// A deadline for the whole call, attempts and waits included.
    pub fn total(mut self, d: Duration) -> Self {
        self.total = Some(d);
        self
    }
    /// No budget at all (the builder's `unbudgeted`, for comparisons).
    pub fn unbudgeted(mut self) -> Self {
        self.unbudgeted = true;
        self
    }

    /// Sets a retry key from text, as [`RawSettings::set_text`](crate::RawSettings::set_text)
    /// does a breaker's: the value is judged at once, a key given twice is a conflict.
    ///
    /// ```
    /// use fusebox_settings::{ConfigError, RawRetrySettings};
    /// let mut raw = RawRetrySettings::new();
    /// raw.set_text("attempts", "4").unwrap();
    /// raw.set_text("backoff", "20ms").unwrap();
    /// assert_eq!(raw.check().unwrap().attempts(), 4);
    /// assert_eq!(
    ///     raw.set_text("timeout", "1s").unwrap_err().to_string(),
    ///     "unknown setting `timeout` of a retry: expected one of attempts, backoff, backoff_max, budget, budget_floor, budget_window, total"
    /// );
    /// let factor = RawRetrySettings::new().set_text("backoff", "2.0");
    /// assert!(matches!(factor, Err(ConfigError::BadDuration { .. })), "a duration, not the breaker's factor");
    /// ```
    pub fn set_text(&mut self, key: &str, text: &str) -> Result<(), ConfigError> {
        let (key, text) = text_pair(key, text);
        let k = Key::retry_from_name(key)
            .ok_or_else(|| ConfigError::UnknownRetrySetting { key: key.into() })?;
        let index = RETRY_KEYS.iter().position(|n| *n == k.name());
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
            (Key::Attempts, Value::Int(n)) => self.attempts = Some(n),
            (Key::RetryBackoff, Value::Duration(d)) => self.backoff = Some(d),
            (Key::BackoffMax, Value::Duration(d)) => self.backoff_max = Some(d),
            (Key::Budget, Value::Int(n)) => self.budget = Some(n),
            (Key::BudgetFloor, Value::Int(n)) => self.budget_floor = Some(n),
            (Key::BudgetWindow, Value::Duration(d)) => self.budget_window = Some(d),
            (Key::Total, Value::Duration(d)) => self.total = Some(d),
            // `parse` gives each key its own kind of value.
            _ => {}
        }
        Ok(())
    }

    /// Checks the settings: each value against its key's range in the table, then the one rule
    /// between keys, a cap at least the first wait.
    pub fn check(&self) -> Result<RetrySettings, ConfigError> {
        let attempts = self.attempts.unwrap_or(defaults::RETRY_ATTEMPTS.into());
        Key::Attempts.check(Value::Int(attempts))?;
        let backoff = self.backoff.unwrap_or(defaults::RETRY_BACKOFF);
        Key::RetryBackoff.check(Value::Duration(backoff))?;
        let backoff_max = self.backoff_max.unwrap_or(defaults::RETRY_BACKOFF_MAX);
        Key::BackoffMax.check(Value::Duration(backoff_max))?;
        let share = self.budget.unwrap_or(defaults::BUDGET_SHARE.into());
        Key::Budget.check(Value::Int(share))?;
        let floor = self.budget_floor.unwrap_or(defaults::BUDGET_FLOOR.into());
        Key::BudgetFloor.check(Value::Int(floor))?;
        let window = self.budget_window.unwrap_or(defaults::BUDGET_WINDOW);
        Key::BudgetWindow.check(Value::Duration(window))?;
        if let Some(t) = self.total {
            Key::Total.check(Value::Duration(t))?;
        }
        // Blamed on the cap when it was given, else on the first wait (the cap is a default).
        if backoff_max < backoff && self.backoff_max.is_some() {
            return Err(ConfigError::OutOfRange {
                field: Key::BackoffMax.name(),
                value: format!("{backoff_max:?}"),
                expected: BACKOFF_MAX_BELOW,
            });
        }
        if backoff_max < backoff {
            return Err(ConfigError::OutOfRange {
                field: Key::RetryBackoff.name(),
                value: format!("{backoff:?}"),
                expected: BACKOFF_ABOVE_DEFAULT_MAX,
            });
        }
        Ok(RetrySettings {
            attempts: attempts as u32,
            backoff,
            backoff_max,
            budget: (!self.unbudgeted).then_some((share as u8, floor as u32, window)),
            total: self.total,
        })
    }
}

/// What a cap below the first wait is told.
const BACKOFF_MAX_BELOW: &str =
    "a cap at least `backoff`, the first wait (defaults: `backoff = \"50ms\"`, `backoff_max = \"2s\"`)";
/// What a first wait above the default cap is told.
const BACKOFF_ABOVE_DEFAULT_MAX: &str =
    "a first wait at most `backoff_max`, the cap of the waits, which is `2s` unless given: give `backoff_max` too";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_messages_name_the_default_cap_as_it_is() {
        let cap = format!("{:?}", defaults::RETRY_BACKOFF_MAX);
        assert!(BACKOFF_ABOVE_DEFAULT_MAX.contains(&format!("`{cap}`")));
        assert!(BACKOFF_MAX_BELOW.contains(&format!("`backoff_max = \"{cap}\"`")));
    }
}
