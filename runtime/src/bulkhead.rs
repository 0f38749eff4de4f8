//! Bulkheads: at most `pool` calls in flight per name, so one slow dependency cannot take
//! every worker (step 4 of the breaker-and-bulkhead lesson).

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Semaphore, SemaphorePermit, TryAcquireError};

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

/// In-flight calls of the packed word (its low half); admitted calls count in the high half.
const IN_FLIGHT: u64 = u32::MAX as u64;
const ADMITTED_ONE: u64 = 1 << 32;

/// How slots are counted.
enum Gate {
    /// Calls fail fast (no `max_wait`): one word holds the calls in flight and the admitted
    /// calls modulo 2^32, so admitting and counting is a single compare-and-swap and freeing a
    /// slot a single subtraction, cheaper than a semaphore; `wraps` counts the high half's wraps.
    Fast { word: AtomicU64, wraps: AtomicU64 },
    /// Calls may wait for a slot: tokio's semaphore queues them fairly.
    Wait { sem: Semaphore, admitted: AtomicU64 },
}

pub(crate) struct Inner {
    pub(crate) config: BulkheadConfig,
    gate: Gate,
    pub(crate) peak: AtomicUsize,
    pub(crate) rejected: AtomicU64,
    pub(crate) conflicts: AtomicU64,
}

impl Inner {
    /// Calls that got a slot.
    pub(crate) fn admitted(&self) -> u64 {
        match &self.gate {
            Gate::Fast { word, wraps } => wraps.load(Relaxed) << 32 | word.load(Relaxed) >> 32,
            Gate::Wait { admitted, .. } => admitted.load(Relaxed),
        }
    }

    fn in_flight(&self) -> usize {
        match &self.gate {
            Gate::Fast { word, .. } => (word.load(Relaxed) & IN_FLIGHT) as usize,
            Gate::Wait { sem, .. } => self.config.pool - sem.available_permits(),
        }
    }

    /// Takes a slot at once if one is free (fast gate).
    fn try_fast(&self, word: &AtomicU64, wraps: &AtomicU64) -> Option<usize> {
        let pool = self.config.pool as u64;
        let mut cur = word.load(Relaxed);
        while cur & IN_FLIGHT < pool {
            let new = cur.wrapping_add(ADMITTED_ONE + 1);
            match word.compare_exchange_weak(cur, new, Acquire, Relaxed) {
                Ok(_) => {
                    if new < ADMITTED_ONE {
                        wraps.fetch_add(1, Relaxed);
                    }
                    return Some((new & IN_FLIGHT) as usize);
                }
                Err(actual) => cur = actual,
            }
        }
        None
    }
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
    _slot: Slot<'a>,
}

/// What a permit holds until dropped.
enum Slot<'a> {
    Fast { _slot: FastSlot<'a> },
    Wait { _permit: SemaphorePermit<'a> },
}

/// A slot of a fast gate: frees itself on drop.
struct FastSlot<'a>(&'a AtomicU64);

impl Drop for FastSlot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Release);
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
        let fast = config.max_wait.is_zero() && config.pool as u64 <= IN_FLIGHT;
        let gate = if fast {
            Gate::Fast {
                word: AtomicU64::new(0),
                wraps: AtomicU64::new(0),
            }
        } else {
            Gate::Wait {
                sem: Semaphore::new(config.pool),
                admitted: AtomicU64::new(0),
            }
        };
        Bulkhead(Arc::new(Inner {
            config,
            gate,
            peak: AtomicUsize::new(0),
            rejected: AtomicU64::new(0),
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
        self.0.in_flight()
    }

    /// Takes a slot, waiting at most `max_wait`; `Rejection::Full` when none frees up.
    pub async fn acquire(&self) -> Result<BulkheadPermit<'_>, Rejection> {
        let inner = &*self.0;
        let (slot, in_flight) = match &inner.gate {
            Gate::Fast { word, wraps } => match inner.try_fast(word, wraps) {
                Some(n) => (
                    Slot::Fast {
                        _slot: FastSlot(word),
                    },
                    n,
                ),
                None => return Err(self.full()),
            },
            Gate::Wait { sem, admitted } => {
                let permit = match sem.try_acquire() {
                    Ok(p) => p,
                    Err(TryAcquireError::NoPermits) if !inner.config.max_wait.is_zero() => {
                        match tokio::time::timeout(inner.config.max_wait, sem.acquire()).await {
                            Ok(Ok(p)) => p,
                            _ => return Err(self.full()),
                        }
                    }
                    Err(_) => return Err(self.full()),
                };
                admitted.fetch_add(1, Relaxed);
                (Slot::Wait { _permit: permit }, inner.in_flight())
            }
        };
        // Read first: the peak rarely moves, and a plain load keeps the line shared.
        if in_flight > inner.peak.load(Relaxed) {
            inner.peak.fetch_max(in_flight, Relaxed);
        }
        Ok(BulkheadPermit { _slot: slot })
    }

    fn full(&self) -> Rejection {
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

impl fmt::Debug for Bulkhead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bulkhead")
            .field("name", &self.name())
            .field("pool", &self.pool())
            .field("in_flight", &self.in_flight())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_fast_gate_counts_admitted_calls_past_two_to_the_32() {
        let b = Bulkhead::builder("bh-wrap")
            .pool(2)
            .build_detached()
            .unwrap();
        let Gate::Fast { word, .. } = &b.0.gate else {
            panic!("a fail-fast bulkhead uses the fast gate");
        };
        word.store((u32::MAX as u64) << 32, Relaxed);
        assert_eq!(b.0.admitted(), u64::from(u32::MAX));
        let one = b.acquire().await.unwrap();
        let two = b.acquire().await.unwrap();
        assert_eq!(b.0.admitted(), (1 << 32) + 1);
        assert_eq!(b.in_flight(), 2);
        assert!(
            b.acquire().await.is_err(),
            "full at 2 even right after the wrap"
        );
        drop((one, two));
        assert_eq!(b.in_flight(), 0);
        assert_eq!(b.metrics().peak, 2);
    }
}
