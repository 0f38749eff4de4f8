//! [`RetryMetrics`]: the figures of one name's retries, from its [`RetryBudget`].

use crate::retry::{budgets, RetryBudget};

/// The retries of one name at one instant: what its [`Retry`](crate::retry::Retry)s did.
///
/// ```
/// use fusebox::metrics;
/// use fusebox::retry::Retry;
/// let _ = Retry::builder("retry-metrics-doc").build().unwrap();
/// let m = metrics();
/// let r = m.retry("retry-metrics-doc").unwrap();
/// assert_eq!((r.calls, r.attempts, r.retries, r.budget_exhausted), (0, 0, 0, 0));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct RetryMetrics {
    /// The name (its breaker's).
    pub name: String,
    /// Calls that went through a retry of this name (first attempts).
    pub calls: u64,
    /// Attempts made: calls plus retries.
    pub attempts: u64,
    /// Retries the budget granted.
    pub retries: u64,
    /// Retries the budget refused: each is a failure returned without another attempt.
    pub budget_exhausted: u64,
    /// `retry_after` hints that held the breaker (or the key) open until the time the
    /// dependency gave ([`Breaker::hold_open`](crate::Breaker::hold_open)).
    pub held_open: u64,
}

impl RetryMetrics {
    pub(crate) fn of(name: &str, b: &RetryBudget) -> RetryMetrics {
        let (calls, retries) = (b.calls(), b.retries());
        RetryMetrics {
            name: name.to_owned(),
            calls,
            attempts: calls + retries,
            retries,
            budget_exhausted: b.exhausted(),
            held_open: b.held_open(),
        }
    }

    /// Every name's, sorted by name.
    pub(crate) fn all() -> Vec<RetryMetrics> {
        budgets()
            .iter()
            .map(|(n, b)| RetryMetrics::of(n, b))
            .collect()
    }
}
