//! Bulkheads: at most `pool` calls in flight per name, so one slow dependency cannot take
//! every worker: once its pool is full, the next call is refused (or waits at most
//! `max_wait`) instead of holding one more worker.

mod config;
mod permit;
mod pool;

use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;

pub use config::{BulkheadBuilder, BulkheadConfig};
pub use permit::BulkheadPermit;
pub(crate) use pool::Pool;

use crate::error::{ConfigError, Rejection};
use crate::sync::atomic::Ordering::*;

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
pub struct Bulkhead(pub(crate) Arc<Pool>);

impl Bulkhead {
    /// Starts configuring a bulkhead named `name`.
    pub fn builder(name: impl Into<String>) -> BulkheadBuilder {
        BulkheadBuilder::new(name.into())
    }

    pub(crate) fn new(config: BulkheadConfig) -> Bulkhead {
        Bulkhead(Arc::new(Pool::new(config)))
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
        Some(BulkheadPermit::taken(inner))
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

impl BulkheadBuilder {
    /// Validates and returns a bulkhead outside the registry.
    pub fn build_detached(&self) -> Result<Bulkhead, ConfigError> {
        Ok(Bulkhead::new(self.config()?))
    }
}

/// A slot held through an owned handle, for futures that must be `'static` (the tower layer's).
/// Costs one `Arc` clone more than a [`BulkheadPermit`]; released the same way, on drop.
// Only the tower layer holds slots this way.
#[cfg_attr(not(feature = "tower"), allow(dead_code))]
pub(crate) struct OwnedPermit(Bulkhead);

#[cfg_attr(not(feature = "tower"), allow(dead_code))]
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
        drop(BulkheadPermit::taken(&self.0 .0));
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
