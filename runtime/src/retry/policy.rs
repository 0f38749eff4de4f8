//! [`Retry`] and its builder: how many attempts, how long between them, the budget, the
//! deadline, and whether a timed-out attempt may be tried again.

use std::sync::Arc;
use std::time::Duration;

use fusebox_settings::{check_name, RawRetrySettings};

use super::backoff::Backoff;
use super::budget::{BudgetConfig, RetryBudget};
use super::names;
use crate::error::ConfigError;

/// A retry policy of one name: see [the module](super) for what is retried.
///
/// Cloning is cheap; every `Retry` of one name shares its [`RetryBudget`].
#[derive(Debug, Clone)]
pub struct Retry {
    pub(super) name: Arc<str>,
    pub(super) attempts: u32,
    pub(super) backoff: Backoff,
    pub(super) budget: Arc<RetryBudget>,
    pub(super) total: Option<Duration>,
    pub(super) attempt_timeout: Option<Duration>,
    pub(super) idempotent: bool,
    /// Whether a `retry_after` hint may hold the breaker open (`hold_open_on_retry_after`).
    pub(super) holds_open: bool,
}

impl Retry {
    /// Starts a policy for `name` (the breaker's name, so the budget counts that name's calls).
    pub fn builder(name: impl Into<String>) -> RetryBuilder {
        RetryBuilder {
            name: name.into(),
            raw: RawRetrySettings::new(),
            unbudgeted: false,
            attempt_timeout: None,
            idempotent: false,
            holds_open: true,
        }
    }

    /// A policy from `key = value` text pairs (a config file's section), each judged by
    /// `#[retry]`'s own table entry, so text gets the attribute's verdict in its words.
    ///
    /// ```
    /// use fusebox::retry::Retry;
    /// use fusebox::settings::ConfigError;
    /// let r = Retry::from_settings("retry-doc-text", [("attempts", "4"), ("total", "2s")]).unwrap();
    /// assert_eq!(r.attempts(), 4);
    /// let e = Retry::from_settings("retry-doc-text", [("budget", "120")]).unwrap_err();
    /// assert_eq!(e.to_string(), "`budget` = 120 is out of range: expected a percentage of the name's calls from 0 to 100");
    /// ```
    pub fn from_settings<K, V>(
        name: impl Into<String>,
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Retry, ConfigError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut b = Retry::builder(name);
        for (k, v) in pairs {
            b.set_text(k.as_ref(), v.as_ref())?;
        }
        b.build()
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Attempts at most, the first included.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The budget it draws on, shared by every `Retry` of its name.
    pub fn budget(&self) -> &RetryBudget {
        &self.budget
    }
}

/// Settings of a [`Retry`], checked by [`build`](RetryBuilder::build) against the table of
/// `fusebox-settings` (`RawRetrySettings`), the check `#[retry]` runs at compile time.
///
/// ```
/// use std::time::Duration;
/// use fusebox::retry::{Backoff, Retry};
/// use fusebox::settings::ConfigError;
/// let r = Retry::builder("retry-doc-builder")
///     .attempts(4)
///     .backoff(Backoff::new(Duration::from_millis(20), Duration::from_millis(500)))
///     .total(Duration::from_secs(2))
///     .attempt_timeout(Duration::from_millis(400))
///     .build()
///     .unwrap();
/// assert_eq!(r.attempts(), 4);
/// let bad = Retry::builder("retry-doc-builder").attempts(0).build().unwrap_err();
/// assert!(matches!(bad, ConfigError::OutOfRange { field: "attempts", .. }));
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct RetryBuilder {
    name: String,
    raw: RawRetrySettings,
    unbudgeted: bool,
    attempt_timeout: Option<Duration>,
    idempotent: bool,
    holds_open: bool,
}

impl RetryBuilder {
    /// Attempts at most, the first included (1..=10, default 3: one call and two retries).
    pub fn attempts(mut self, n: u32) -> Self {
        self.raw = self.raw.attempts(n);
        self
    }

    /// The wait between attempts (default 50 ms doubling to 2 s, full jitter).
    pub fn backoff(mut self, b: Backoff) -> Self {
        self.raw = self.raw.backoff(b.base()).backoff_max(b.cap());
        self
    }

    /// The name's retry budget (default [`BudgetConfig::default`]: 20 % of calls over 10 s
    /// plus 1 a second).
    pub fn budget(mut self, b: BudgetConfig) -> Self {
        self.raw = self
            .raw
            .budget(b.share_pct)
            .budget_floor(b.floor_per_s)
            .budget_window(b.window);
        self.unbudgeted = false;
        self
    }

    /// No budget: every retry the other rules allow is made. What turns a slow dependency
    /// into a dead one; here for comparisons.
    pub fn unbudgeted(mut self) -> Self {
        self.unbudgeted = true;
        self
    }

    /// A deadline for the whole call, attempts and waits included: no retry starts that
    /// could not finish inside it (with [`attempt_timeout`](Self::attempt_timeout) known, a
    /// retry starts only if its wait and its timeout fit in what is left), and one still
    /// running at the deadline is dropped there, the call returning the error it retried.
    /// The first attempt always starts and runs under its breaker's timeout alone. A total
    /// too long for the clock (centuries) is no deadline, as a `timeout` that long is none.
    pub fn total(mut self, d: Duration) -> Self {
        self.raw = self.raw.total(d);
        self
    }

    /// The longest one attempt can take (the breaker's `timeout`), for the deadline.
    pub fn attempt_timeout(mut self, d: Duration) -> Self {
        self.attempt_timeout = Some(d);
        self
    }

    /// Timed-out attempts may be tried again: only for calls that are safe to repeat.
    pub fn idempotent(mut self, yes: bool) -> Self {
        self.idempotent = yes;
        self
    }

    /// Whether a `retry_after` hint holds the breaker (or the key) open until the time the
    /// dependency gave, capped by the breaker's `open_for_max` (default `true`; see
    /// [`Breaker::hold_open`](crate::Breaker::hold_open)). With `false` the hint only delays
    /// this caller's next attempt.
    pub fn hold_open_on_retry_after(mut self, yes: bool) -> Self {
        self.holds_open = yes;
        self
    }

    /// Sets one of `#[retry]`'s settings from text (`attempts`, `backoff`, `backoff_max`,
    /// `budget`, `budget_floor`, `budget_window`, `total`), judged at once by its table entry.
    ///
    /// ```
    /// use fusebox::retry::Retry;
    /// let mut b = Retry::builder("retry-doc-set-text");
    /// b.set_text("backoff", "20ms").unwrap();
    /// assert!(b.set_text("backoff_max", "0s").is_err());
    /// assert_eq!(b.build().unwrap().attempts(), 3);
    /// ```
    pub fn set_text(&mut self, key: &str, text: &str) -> Result<(), ConfigError> {
        self.raw.set_text(key, text)
    }

    /// Checks the settings and joins the name's budget.
    pub fn build(self) -> Result<Retry, ConfigError> {
        if self.name.is_empty() {
            return Err(ConfigError::BadName {
                name: self.name,
                reason: "a retry's name is its budget's: it cannot be empty",
            });
        }
        check_name(&self.name)?;
        let raw = if self.unbudgeted {
            self.raw.unbudgeted()
        } else {
            self.raw
        };
        let s = raw.check()?;
        if self.attempt_timeout.is_some_and(|d| d.is_zero()) {
            return Err(ConfigError::ZeroDuration {
                field: "attempt_timeout",
            });
        }
        let budget = s
            .budget()
            .map(|(share_pct, floor_per_s, window)| BudgetConfig {
                share_pct,
                floor_per_s,
                window,
            });
        let budget = names::shared(&self.name, budget);
        Ok(Retry {
            name: self.name.into(),
            attempts: s.attempts(),
            backoff: Backoff::new(s.backoff(), s.backoff_max()),
            budget,
            total: s.total(),
            attempt_timeout: self.attempt_timeout,
            idempotent: self.idempotent,
            holds_open: self.holds_open,
        })
    }
}
