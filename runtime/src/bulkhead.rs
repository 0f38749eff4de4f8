//! Bulkheads: at most `pool` calls in flight per name, so one slow dependency cannot take
//! every worker (step 4 of the breaker-and-bulkhead lesson).

use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, Semaphore};

use crate::config::check_name;
use crate::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};
use crate::{ConfigError, Rejection};

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
    /// Validates, then returns the registry's bulkhead of this name (creating it if new).
    pub fn build(&self) -> Result<Bulkhead, ConfigError> {
        Ok(crate::registry().register_bulkhead(self.config()?))
    }
    /// Validates and returns a bulkhead outside the registry.
    pub fn build_detached(&self) -> Result<Bulkhead, ConfigError> {
        Ok(Bulkhead::new(self.config()?))
    }
}

pub(crate) struct Inner {
    pub(crate) config: BulkheadConfig,
    /// Calls in flight: one atomic the loom model checker can see (a semaphore it cannot).
    taken: AtomicUsize,
    /// Wakes callers waiting for a slot; only used when `max_wait` is not zero.
    freed: Notify,
    pub(crate) peak: AtomicUsize,
    pub(crate) rejected: AtomicU64,
    pub(crate) admitted: AtomicU64,
    pub(crate) conflicts: AtomicU64,
}

/// A handle to one bulkhead. Cheap to clone; clones share the pool.
///
/// ```
/// use fusebox_runtime::{Bulkhead, Rejection};
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let b = Bulkhead::builder("one-at-a-time").pool(1).build_detached().unwrap();
/// let held = b.acquire().await.unwrap();
/// assert!(matches!(b.call(async { 1 }).await, Err(Rejection::Full { .. })));
/// drop(held);
/// assert_eq!(b.call(async { 1 }).await.unwrap(), 1);
/// # }
/// ```
#[derive(Clone)]
pub struct Bulkhead(pub(crate) Arc<Inner>);

/// A slot in a bulkhead's pool, released on drop.
#[must_use = "the slot is released as soon as the permit is dropped"]
pub struct BulkheadPermit<'a> {
    inner: &'a Inner,
}

impl Drop for BulkheadPermit<'_> {
    fn drop(&mut self) {
        self.inner.taken.fetch_sub(1, Release);
        if !self.inner.config.max_wait.is_zero() {
            self.inner.freed.notify_one();
        }
    }
}

impl fmt::Debug for BulkheadPermit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BulkheadPermit")
    }
}

impl Bulkhead {
    /// Starts configuring a bulkhead named `name`.
    pub fn builder(name: impl Into<String>) -> BulkheadBuilder {
        BulkheadBuilder {
            name: name.into(),
            pool: 0,
            max_wait: Duration::ZERO,
        }
    }

    pub(crate) fn new(config: BulkheadConfig) -> Bulkhead {
        Bulkhead(Arc::new(Inner {
            taken: AtomicUsize::new(0),
            freed: Notify::new(),
            config,
            peak: AtomicUsize::new(0),
            rejected: AtomicU64::new(0),
            admitted: AtomicU64::new(0),
            conflicts: AtomicU64::new(0),
        }))
    }

    /// Registry name.
    pub fn name(&self) -> &str {
        &self.0.config.name
    }
    /// Pool size.
    pub fn pool(&self) -> usize {
        self.0.config.pool
    }
    /// Its settings.
    pub fn config(&self) -> &BulkheadConfig {
        &self.0.config
    }
    /// Calls in flight now.
    pub fn in_flight(&self) -> usize {
        self.0.taken.load(Relaxed)
    }

    /// Takes a slot, waiting at most `max_wait`; `Rejection::Full` when none frees up.
    pub async fn acquire(&self) -> Result<BulkheadPermit<'_>, Rejection> {
        let inner = &*self.0;
        if let Some(p) = self.try_acquire_now() {
            return Ok(p);
        }
        if inner.config.max_wait.is_zero() {
            return Err(self.full());
        }
        let wait = async {
            loop {
                let mut freed = pin!(inner.freed.notified());
                // Registered before the retry, so a slot freed in between still wakes us.
                freed.as_mut().enable();
                if let Some(p) = self.try_acquire_now() {
                    return p;
                }
                freed.await;
            }
        };
        match tokio::time::timeout(inner.config.max_wait, wait).await {
            Ok(p) => Ok(p),
            Err(_) => Err(self.full()),
        }
    }

    /// Takes a slot if one is free, without waiting and without counting a rejection.
    pub(crate) fn try_acquire_now(&self) -> Option<BulkheadPermit<'_>> {
        let inner = &*self.0;
        let mut cur = inner.taken.load(Relaxed);
        loop {
            if cur >= inner.config.pool {
                return None;
            }
            match inner
                .taken
                .compare_exchange_weak(cur, cur + 1, Acquire, Relaxed)
            {
                Ok(_) => break,
                Err(actual) => cur = actual,
            }
        }
        inner.admitted.fetch_add(1, Relaxed);
        // Read first: the peak rarely moves, and a plain load keeps the line shared.
        if cur + 1 > inner.peak.load(Relaxed) {
            inner.peak.fetch_max(cur + 1, Relaxed);
        }
        Some(BulkheadPermit { inner })
    }

    /// Counts a rejection and describes it.
    pub(crate) fn full(&self) -> Rejection {
        self.0.rejected.fetch_add(1, Relaxed);
        Rejection::Full {
            name: self.0.config.name.clone(),
            pool: self.0.config.pool,
        }
    }

    /// Runs `fut` holding a slot; the slot is freed when it finishes or is dropped.
    pub async fn call<F: Future>(&self, fut: F) -> Result<F::Output, Rejection> {
        let _slot = self.acquire().await?;
        Ok(fut.await)
    }

    /// True when both handles share the same pool.
    pub fn ptr_eq(&self, other: &Bulkhead) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A slot held through an owned handle, for futures that must be `'static` (the tower layer's).
/// Costs one `Arc` clone more than a [`BulkheadPermit`]; released the same way, on drop.
pub(crate) struct OwnedPermit(Bulkhead);

impl Bulkhead {
    /// [`try_acquire_now`](Self::try_acquire_now), held by this handle (given back if full).
    pub(crate) fn try_acquire_owned(self) -> Result<OwnedPermit, Bulkhead> {
        let taken = self.try_acquire_now().map(std::mem::forget).is_some();
        if taken {
            Ok(OwnedPermit(self))
        } else {
            Err(self)
        }
    }

    /// [`acquire`](Self::acquire), held by an owned handle.
    pub(crate) async fn acquire_owned(self) -> Result<OwnedPermit, Rejection> {
        std::mem::forget(self.acquire().await?);
        Ok(OwnedPermit(self))
    }
}

impl Drop for OwnedPermit {
    fn drop(&mut self) {
        // The forgotten permit's own release, so both kinds free a slot identically.
        drop(BulkheadPermit { inner: &self.0 .0 });
    }
}

impl fmt::Debug for Bulkhead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bulkhead")
            .field("name", &self.name())
            .field("pool", &self.pool())
            .field("in_flight", &self.in_flight())
            .finish()
    }
}
