//! [`Retry`] and its builder: how many attempts, how long between them, the budget, the
//! deadline, and whether a timed-out attempt may be tried again.

use std::sync::Arc;
use std::time::Duration;

use super::backoff::Backoff;
use super::budget::{BudgetConfig, RetryBudget};
use super::names;
use crate::error::ConfigError;

/// The most attempts a retry may make: past a handful, retrying only adds load.
pub const MAX_ATTEMPTS: u32 = 10;

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
}

impl Retry {
    /// Starts a policy for `name` (the breaker's name, so the budget counts that name's calls).
    pub fn builder(name: impl Into<String>) -> RetryBuilder {
        RetryBuilder {
            name: name.into(),
            attempts: 3,
            backoff: Backoff::default(),
            budget: Some(BudgetConfig::default()),
            total: None,
            attempt_timeout: None,
            idempotent: false,
        }
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

/// Settings of a [`Retry`], checked by [`build`](RetryBuilder::build).
///
/// ```
/// use std::time::Duration;
/// use fusebox_runtime::retry::{Backoff, Retry};
/// use fusebox_runtime::ConfigError;
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
    attempts: u32,
    backoff: Backoff,
    budget: Option<BudgetConfig>,
    total: Option<Duration>,
    attempt_timeout: Option<Duration>,
    idempotent: bool,
}

impl RetryBuilder {
    /// Attempts at most, the first included (default 3: one call and two retries).
    pub fn attempts(mut self, n: u32) -> Self {
        self.attempts = n;
        self
    }

    /// The wait between attempts (default 50 ms doubling to 2 s, full jitter).
    pub fn backoff(mut self, b: Backoff) -> Self {
        self.backoff = b;
        self
    }

    /// The name's retry budget (default [`BudgetConfig::default`]: 20 % of calls over 10 s
    /// plus 1 a second).
    pub fn budget(mut self, b: BudgetConfig) -> Self {
        self.budget = Some(b);
        self
    }

    /// No budget: every retry the other rules allow is made. What turns a slow dependency
    /// into a dead one; here for comparisons.
    pub fn unbudgeted(mut self) -> Self {
        self.budget = None;
        self
    }

    /// A deadline for the whole call, attempts and waits included: no attempt starts that
    /// could not finish inside it (with [`attempt_timeout`](Self::attempt_timeout) known, an
    /// attempt starts only if its wait and its timeout fit in what is left).
    pub fn total(mut self, d: Duration) -> Self {
        self.total = Some(d);
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

    /// Checks the settings and joins the name's budget.
    pub fn build(self) -> Result<Retry, ConfigError> {
        if self.name.is_empty() {
            return Err(ConfigError::BadName {
                name: self.name,
                reason: "a retry's name is its budget's: it cannot be empty",
            });
        }
        if !(1..=MAX_ATTEMPTS).contains(&self.attempts) {
            return Err(ConfigError::OutOfRange {
                field: "attempts",
                value: self.attempts.to_string(),
                expected: "a number of attempts from 1 to 10",
            });
        }
        if self.backoff.cap() < self.backoff.base() {
            return Err(ConfigError::OutOfRange {
                field: "backoff",
                value: format!(
                    "{:?} capped at {:?}",
                    self.backoff.base(),
                    self.backoff.cap()
                ),
                expected: "a cap at least the first wait",
            });
        }
        if let Some(b) = self.budget {
            if b.share_pct > 100 {
                return Err(ConfigError::OutOfRange {
                    field: "budget",
                    value: format!("{} %", b.share_pct),
                    expected: "a share of calls from 0 to 100 %",
                });
            }
            if b.window.is_zero() {
                return Err(ConfigError::ZeroDuration { field: "budget" });
            }
        }
        for (field, d) in [
            ("total", self.total),
            ("attempt_timeout", self.attempt_timeout),
        ] {
            if d.is_some_and(|d| d.is_zero()) {
                return Err(ConfigError::ZeroDuration { field });
            }
        }
        let budget = names::shared(&self.name, self.budget);
        Ok(Retry {
            name: self.name.into(),
            attempts: self.attempts,
            backoff: self.backoff,
            budget,
            total: self.total,
            attempt_timeout: self.attempt_timeout,
            idempotent: self.idempotent,
        })
    }
}
