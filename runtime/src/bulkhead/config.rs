//! A bulkhead's settings and the builder that checks them.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::error::ConfigError;
use crate::settings::check_name;

/// Settings of one bulkhead.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct BulkheadConfig {
    pub(crate) name: Arc<str>,
    pub(crate) pool: usize,
    pub(crate) max_wait: Duration,
}

impl BulkheadConfig {
    /// Registry name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Calls allowed in flight at once.
    pub fn pool(&self) -> usize {
        self.pool
    }
    /// How long a call waits for a free slot before it is rejected.
    pub fn max_wait(&self) -> Duration {
        self.max_wait
    }
}

/// Builds a [`Bulkhead`].
///
/// ```
/// use fusebox_runtime::Bulkhead;
/// let reports = Bulkhead::builder("reports").pool(60).build().unwrap();
/// assert_eq!(reports.pool(), 60);
/// assert!(Bulkhead::builder("reports").pool(0).build().is_err());
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct BulkheadBuilder {
    name: String,
    pool: usize,
    max_wait: Duration,
}

impl BulkheadBuilder {
    pub(super) fn new(name: String) -> Self {
        BulkheadBuilder {
            name,
            pool: 0,
            max_wait: Duration::ZERO,
        }
    }
    /// Calls allowed in flight at once (required, at least 1).
    pub fn pool(mut self, n: usize) -> Self {
        self.pool = n;
        self
    }
    /// How long the next call may wait for a slot (default zero: fail at once).
    pub fn max_wait(mut self, d: Duration) -> Self {
        self.max_wait = d;
        self
    }
    /// Checks the settings.
    pub fn config(&self) -> Result<BulkheadConfig, ConfigError> {
        check_name(&self.name)?;
        if self.pool == 0 || self.pool > Semaphore::MAX_PERMITS {
            return Err(ConfigError::OutOfRange {
                field: "pool",
                value: self.pool.to_string(),
                expected: "at least 1 call in flight",
            });
        }
        Ok(BulkheadConfig {
            name: self.name.as_str().into(),
            pool: self.pool,
            max_wait: self.max_wait,
        })
    }
}
