//! The budgets by name: every [`Retry`](super::Retry) of one name shares one budget, as every
//! call site of one name shares one breaker.
//!
//! The map is owned by a registry: the process-wide registry's is [`global`], and each test
//! scope's registry (feature `testing`) has its own, lent to this layer through [`SCOPED`]
//! (this layer never imports the registry), so parallel tests never share a budget.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::budget::{BudgetConfig, RetryBudget};
use crate::sync::lock_std as lock;

/// One registry's retry budgets, by name.
#[derive(Default)]
pub(crate) struct Budgets(Mutex<HashMap<Arc<str>, Arc<RetryBudget>>>);

/// Set by `testing`: the budgets of the scope's registry entered on this thread.
#[cfg(feature = "testing")]
pub(crate) static SCOPED: crate::scope_hook::ScopeHook<Budgets> =
    crate::scope_hook::ScopeHook::new();

/// The process-wide registry's budgets.
pub(crate) fn global() -> Arc<Budgets> {
    static ALL: OnceLock<Arc<Budgets>> = OnceLock::new();
    ALL.get_or_init(Arc::default).clone()
}

/// The budgets the calling code sees: its test scope's, else the process-wide ones.
fn current() -> Arc<Budgets> {
    #[cfg(feature = "testing")]
    if let Some(scoped) = SCOPED.current() {
        return scoped;
    }
    global()
}

impl Budgets {
    /// The budget of `name`, if one was made.
    pub(crate) fn get(&self, name: &str) -> Option<Arc<RetryBudget>> {
        lock(&self.0).get(name).cloned()
    }

    /// The budget of `name`, made with `config` on first use. A second configuration for the
    /// same name keeps the first (one budget a name, like the registry's breakers) and logs
    /// at ERROR.
    fn shared(&self, name: &str, config: Option<BudgetConfig>) -> Arc<RetryBudget> {
        let mut all = lock(&self.0);
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
}

/// The budget of `name` in the registry the caller sees, made with `config` on first use.
pub(super) fn shared(name: &str, config: Option<BudgetConfig>) -> Arc<RetryBudget> {
    current().shared(name, config)
}

/// The retry budget of `name`, if a [`Retry`](super::Retry) of that name was built (in the
/// caller's test scope, inside one).
///
/// ```
/// use fusebox::retry::{budget, Retry};
/// let _ = Retry::builder("retry-doc-budget").build().unwrap();
/// assert_eq!(budget("retry-doc-budget").unwrap().retries(), 0);
/// assert!(budget("retry-doc-nobody").is_none());
/// ```
pub fn budget(name: &str) -> Option<Arc<RetryBudget>> {
    current().get(name)
}

/// Every retry budget the caller sees, by name, sorted: for metrics.
pub fn budgets() -> Vec<(Arc<str>, Arc<RetryBudget>)> {
    let budgets = current();
    let mut v: Vec<_> = lock(&budgets.0)
        .iter()
        .map(|(n, b)| (n.clone(), b.clone()))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}
