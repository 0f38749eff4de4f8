//! The budgets by name: every [`Retry`](super::Retry) of one name shares one budget, as every
//! call site of one name shares one breaker.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use super::budget::{BudgetConfig, RetryBudget};
use std::sync::Mutex;

use crate::sync::lock_std as lock;

type Budgets = Mutex<HashMap<Arc<str>, Arc<RetryBudget>>>;

fn all() -> &'static Budgets {
    static ALL: OnceLock<Budgets> = OnceLock::new();
    ALL.get_or_init(Budgets::default)
}

/// The budget of `name`, made with `config` on first use. A second configuration for the same
/// name keeps the first (one budget a name, like the registry's breakers) and logs at ERROR.
pub(super) fn shared(name: &str, config: Option<BudgetConfig>) -> Arc<RetryBudget> {
    let mut all = lock(all());
    if let Some(b) = all.get(name) {
        if b.is_limited() != config.is_some() || config.is_some_and(|c| c != b.config()) {
            tracing::error!(
                name,
                "retry budget `{name}` configured again with other settings: keeping the first"
            );
        }
        return b.clone();
    }
    let b = Arc::new(match config {
        Some(c) => RetryBudget::new(c),
        None => RetryBudget::unlimited(),
    });
    all.insert(name.into(), b.clone());
    b
}

/// The retry budget of `name`, if a [`Retry`](super::Retry) of that name was built.
///
/// ```
/// use fusebox_runtime::retry::{budget, Retry};
/// let _ = Retry::builder("retry-doc-budget").build().unwrap();
/// assert_eq!(budget("retry-doc-budget").unwrap().retries(), 0);
/// assert!(budget("retry-doc-nobody").is_none());
/// ```
pub fn budget(name: &str) -> Option<Arc<RetryBudget>> {
    lock(all()).get(name).cloned()
}

/// Every retry budget, by name, sorted: for metrics.
pub fn budgets() -> Vec<(Arc<str>, Arc<RetryBudget>)> {
    let mut v: Vec<_> = lock(all())
        .iter()
        .map(|(n, b)| (n.clone(), b.clone()))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}
