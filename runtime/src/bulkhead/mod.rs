//! Bulkheads: at most `pool` calls in flight per name, so one slow dependency cannot take
//! every worker: once its pool is full, the next call is refused (or waits at most
//! `max_wait`) instead of holding one more worker.

mod adaptive;
mod call;
mod config;
mod live;
mod permit;
mod pool;
mod slots;
mod text;

use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

pub(crate) use call::{Answer, BulkheadCall};
pub use config::{BulkheadBuilder, BulkheadConfig};
pub use permit::BulkheadPermit;
pub(crate) use pool::Pool;

use crate::error::{ConfigError, Rejection};
use crate::sync::atomic::Ordering::*;

/// A handle to one bulkhead. Cheap to clone; clones share the pool.
///
/// ```
/// use fusebox::{Bulkhead, Rejection};
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let b = Bulkhead::builder("one-at-a-time").pool(1).build_detached().unwrap();
/// let held = b.acquire().await.unwrap();
/// assert!(matches!(b.call(async { 1 }).await, Err(Rejection::Full { .. })));
/// drop(held);
/// assert_eq!(b.call(async { 1 }).await.unwrap(), 1);
/// # }
/// ```
///
/// # Adaptive limit
///
/// With `#[bulkhead(limit = "adaptive")]` (or [`BulkheadBuilder::adaptive`]) the pool sizes
/// itself from the latency of the calls it lets through, between `min_pool` (default 1) and
/// `max_pool` (default 200), starting at `pool` (default 20). The algorithm is Netflix
/// concurrency-limits' **Gradient2**, chosen over AIMD because a stuck dependency shows up as
/// latency long before it shows up as errors (a hung call only "fails" at its timeout), and
/// over Vegas because Gradient2 compares averages, not a minimum that one lucky call drags down:
///
/// - Each call's latency is the time it held its slot, from the end of its first poll (a call
///   that answers within it counts as zero and reads no clock, as the breaker measures; a
///   permit from [`acquire`](Bulkhead::acquire) is timed from the acquire). A **window**
///   closes once 100 ms passed since the last one, at the next multiple of 10 calls ended (of
///   the limit, if smaller): Netflix's `WindowedLimit` batches 10 samples; 100 ms is Envoy's
///   adaptive concurrency interval.
/// - `short` is the window's average latency; `long` is an exponential average of the windows'
///   averages over 600 windows, seeded by the plain average of the first 10 (Gradient2's
///   `longWindow` and warm-up); when `long` exceeds twice `short` it is cut by 10 % per window,
///   so the baseline follows a recovery quickly (Gradient2).
/// - `gradient = clamp(1.5 × long / short, 0.5, 1.0)`. Below 1.0 (calls are queueing) the
///   limit becomes `limit × gradient`; at 1.0 it grows by 4 (Gradient2's `queueSize`): back to
///   the level a slow spell found it at whether or not it is used (what a spell took is given
///   back), beyond that only while at least half of it is in use (an idle pool proves nothing
///   about a larger one). Always within `min_pool..=max_pool`.
/// - Where fusebox departs from Gradient2, and why: Gradient2's current release compares
///   `long / short` without a tolerance, smooths every step by 0.2 and adds its 4 on every
///   step; fusebox keeps a tolerance of 1.5 (as Gradient2's earlier `rttTolerance` did) to
///   absorb noise, does not smooth (a bulkhead must shrink before the callers' workers fill),
///   and adds 4 only when nothing queues (otherwise `limit × 0.5 + 4` never falls below 8,
///   which is the whole of a small pool).
/// - **The stall guard**, fusebox's own: a gradient learns only from calls that end, so when a
///   dependency stops answering, every call the limit admits waits out its timeout before the
///   limit hears of it. In issue 26's real run (payments from 20 ms to 8 s, 50 calls/s, a 2 s
///   timeout, 20 database connections shared with `/orders`), a limit of 20 was filled in
///   0.4 s and `/orders` starved. So when calls keep starting while none has ended for
///   2 × `long` (at least 100 ms, and only once a window has closed), the limit is cut to the
///   calls in flight (not below 4, nor `min_pool`); the cut is given back like any other, as
///   windows show the old latency. A pool that went empty, and calls that keep ending however
///   slowly, never trip it.
///
/// What that gives, each checked by a test on a paused clock (`runtime/tests/adaptive.rs`,
/// `runtime/tests/adaptive_stall.rs`):
/// - **Latency doubles**: each window cuts the limit by a quarter (`1.5 × 1 / 2`), so it is
///   **halved within 3 windows** at the new latency (100, 75, 56, 42), 4 counting the window
///   open at the change. It keeps falling while the latency stays doubled, to `min_pool` at
///   worst, until the long-term average has moved a third of the way (about 120 windows): a
///   dependency that stays slower becomes the new normal, and the limit grows back.
/// - **Noise of ±20 %** around a steady latency **never lowers the limit** (`1.5 × 0.8 / 1.2 =
///   1.0`, the clamp's top): the limit stays where it is, or grows by 4 a window while at least
///   half of it is in use, as with steady latency.
/// - **A stuck dependency** (every call ends at its timeout, many times its latency) halves
///   the limit every window, to `min_pool`; when it answers at its old latency again the limit
///   grows by 4 a window, and windows come faster the more calls it admits.
/// - **A dependency that stops answering** under open-loop load: after 100 ms without an end
///   (6 or 7 calls at 50/s), no more calls are let in than are already waiting; in the replay
///   of issue 26's run the adaptive limit keeps `/orders` as whole as the pool of 5 does.
///
/// Every change is logged at DEBUG, a fall to `min_pool` at WARN; the limit and its history are
/// in [`metrics`](Bulkhead::metrics) (`pool` and `adaptive`), Prometheus and the admin JSON.
/// A fixed pool reads no clock; an adaptive one reads it when a call takes and gives back its
/// slot. Pair it with a timeout: calls that never end teach the gradient nothing (the stall
/// guard only stops more of them piling up).
///
/// ```
/// use fusebox::Bulkhead;
/// let b = Bulkhead::builder("adaptive-pool").adaptive().min_pool(4).max_pool(64).build_detached().unwrap();
/// assert_eq!(b.pool(), 20);
/// assert!(Bulkhead::builder("bad").adaptive().min_pool(10).max_pool(4).build_detached().is_err());
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
    /// Pool size: the slots there are now (for an adaptive limit, its current value).
    pub fn pool(&self) -> usize {
        self.0.limit.load(Relaxed)
    }
    /// Its settings.
    pub fn config(&self) -> &BulkheadConfig {
        &self.0.config
    }
    /// Calls in flight now.
    pub fn in_flight(&self) -> usize {
        self.0.slots.taken()
    }

    /// Takes a slot, waiting at most `max_wait`; `Rejection::Full` when none frees up. An
    /// adaptive pool times the holder from here until the permit is dropped.
    pub async fn acquire(&self) -> Result<BulkheadPermit<'_>, Rejection> {
        let p = self.acquire_untimed().await?;
        p.start();
        Ok(p)
    }

    /// [`acquire`](Self::acquire) for a call that times itself (from the end of its first
    /// poll: `call.rs`, `breaker/call.rs`).
    pub(crate) async fn acquire_untimed(&self) -> Result<BulkheadPermit<'_>, Rejection> {
        let inner = &*self.0;
        if let Some(p) = self.try_acquire_now() {
            return Ok(p);
        }
        // A change given `for` a time ends on the first look after it: a call the pool would
        // make wait or refuse looks (one that finds a slot does not: the hot path stays as is).
        if inner
            .live
            .load()
            .as_ref()
            .is_some_and(|l| l.until.is_some())
        {
            self.lapse();
            if let Some(p) = self.try_acquire_now() {
                return Ok(p);
            }
        }
        let max_wait = inner.max_wait.load(Relaxed);
        if max_wait == 0 {
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
        match tokio::time::timeout(Duration::from_nanos(max_wait), wait).await {
            Ok(p) => Ok(p),
            Err(_) => Err(self.full()),
        }
    }

    /// Whether a caller the pool has no slot for goes through [`acquire_untimed`] (which waits
    /// up to `max_wait`, and first ends a change given `for` a time that is over) rather than
    /// being refused at once. Read from the live atomic, not the code's config: a `max_wait`
    /// changed from outside the code holds on every call path.
    ///
    /// [`acquire_untimed`]: Self::acquire_untimed
    /// Whether a probe of the breaker `id` (its core's address) holds one of the slots
    /// (`breaker/call.rs`).
    pub(crate) fn holds_a_probe_of(&self, id: usize) -> bool {
        crate::sync::lock(&self.0.probes).contains(&id)
    }

    pub(crate) fn may_wait(&self) -> bool {
        let inner = &*self.0;
        inner.max_wait.load(Relaxed) != 0
            || inner
                .live
                .load()
                .as_ref()
                .is_some_and(|l| l.until.is_some())
    }

    /// Takes a slot if one is free, without waiting and without counting a rejection.
    pub(crate) fn try_acquire_now(&self) -> Option<BulkheadPermit<'_>> {
        let inner = &*self.0;
        let taken = inner.slots.try_take(inner.limit.load(Relaxed))?;
        // Read first: the peak rarely moves, and a plain load keeps the line shared.
        if taken > inner.peak.load(Relaxed) {
            inner.peak.fetch_max(taken, Relaxed);
        }
        if taken == 1 {
            if let Some(a) = &inner.adaptive {
                a.emptied();
            }
        }
        Some(BulkheadPermit::taken(inner))
    }

    /// Counts a rejection and describes it.
    pub(crate) fn full(&self) -> Rejection {
        self.0.rejected.fetch_add(1, Relaxed);
        Rejection::Full {
            name: crate::local_name::for_refusal(&self.0.config.name),
            pool: self.pool(),
        }
    }

    /// Runs `fut` holding a slot; the slot is freed when it finishes or is dropped.
    pub fn call<'a, F: Future>(
        &'a self,
        fut: F,
    ) -> impl Future<Output = Result<F::Output, Rejection>> + use<'a, F> {
        // A future written by hand (`call.rs`): the caller's future is stored once.
        BulkheadCall::<F, call::AsResult>::new(Some(self), fut)
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
pub(crate) struct OwnedPermit(Bulkhead, u64);

#[cfg_attr(not(feature = "tower"), allow(dead_code))]
impl Bulkhead {
    /// [`try_acquire_now`](Self::try_acquire_now), held by this handle (given back if full).
    pub(crate) fn try_acquire_owned(self) -> Result<OwnedPermit, Bulkhead> {
        let started = self.try_acquire_now().map(|p| {
            p.start();
            let s = p.started();
            std::mem::forget(p);
            s
        });
        match started {
            Some(s) => Ok(OwnedPermit(self, s)),
            None => Err(self),
        }
    }

    /// [`acquire`](Self::acquire), held by an owned handle.
    pub(crate) async fn acquire_owned(self) -> Result<OwnedPermit, Rejection> {
        let p = self.acquire().await?;
        let started = p.started();
        std::mem::forget(p);
        Ok(OwnedPermit(self, started))
    }
}

impl Drop for OwnedPermit {
    fn drop(&mut self) {
        // The forgotten permit's own release, so both kinds free a slot identically.
        drop(BulkheadPermit::resumed(&self.0 .0, self.1));
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
