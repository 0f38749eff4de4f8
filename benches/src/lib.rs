//! Shared pieces of the fusebox benchmarks: the dependency every case wraps, a minimal
//! executor, and the peers configured like fusebox's defaults.
//!
//! Every case drives its future with [`block_on`] (a spin-polling loop with a no-op waker),
//! the bare call included, so executor overhead cancels out of the differences.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

pub mod retry;

/// The error of the simulated dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Boom;

impl std::fmt::Display for Boom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("boom")
    }
}

impl std::error::Error for Boom {}

impl From<fusebox_runtime::Rejection> for Boom {
    fn from(_: fusebox_runtime::Rejection) -> Boom {
        Boom
    }
}

/// The dependency: an async call that answers at once, failing when `fail` is true.
#[inline(never)]
pub async fn dependency(x: u64, fail: bool) -> Result<u64, Boom> {
    if black_box(fail) {
        Err(Boom)
    } else {
        Ok(black_box(x))
    }
}

/// The dependency behind `#[breaker]` with a static name and the default settings.
#[fusebox::breaker(name = "bench-attr")]
pub async fn attr_breaker(x: u64, fail: bool) -> Result<u64, Boom> {
    dependency(x, fail).await
}

/// The dependency behind `#[breaker]` with a latency rule and a timeout (time window).
#[fusebox::breaker(name = "bench-attr-timed", trip_p95 = "500ms", timeout = "3s")]
pub async fn attr_timed(x: u64) -> Result<u64, Boom> {
    dependency(x, false).await
}

/// The dependency under `tokio::time::timeout`, its elapsed error mapped to the dependency's:
/// what a peer without timeouts of its own wraps (recloser around it, for the timed cases).
pub async fn dependency_timeout(x: u64) -> Result<u64, Boom> {
    match tokio::time::timeout(settings::TIMEOUT, dependency(x, false)).await {
        Ok(r) => r,
        Err(_) => Err(Boom),
    }
}

/// The dependency behind a keyed `#[breaker]`: one breaker per shard, `bench-attr-keyed/<shard>`.
#[fusebox::breaker(name = "bench-attr-keyed", key = shard, max_keys = 10_000)]
pub async fn attr_keyed(shard: u64, x: u64) -> Result<u64, Boom> {
    dependency(x, false).await
}

/// A keyed `#[breaker]` keyed by text (a host name): the key is handed over as its bytes.
#[fusebox::breaker(name = "bench-attr-keyed-host", key = host, max_keys = 10_000)]
pub async fn attr_keyed_host(host: &str, x: u64) -> Result<u64, Boom> {
    dependency(x, false).await
}

/// A key that is only `Display` (neither an integer nor text): formatted on every call.
pub struct Tenant(pub u64);

impl std::fmt::Display for Tenant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "t{}", self.0)
    }
}

/// A keyed `#[breaker]` keyed by a `Display` type.
#[fusebox::breaker(name = "bench-attr-keyed-display", key = tenant, max_keys = 10_000)]
pub async fn attr_keyed_display(tenant: Tenant, x: u64) -> Result<u64, Boom> {
    dependency(x, false).await
}

/// The dependency behind an adaptive `#[bulkhead]` (issue 17): the same pool, sized by latency.
#[fusebox::bulkhead(
    limit = "adaptive",
    pool = 64,
    max_pool = 64,
    name = "bench-attr-adaptive"
)]
pub async fn attr_adaptive(x: u64) -> Result<u64, Boom> {
    dependency(x, false).await
}

/// The dependency behind `#[bulkhead]` alone.
#[fusebox::bulkhead(pool = 64, name = "bench-attr-pool")]
pub async fn attr_bulkhead(x: u64) -> Result<u64, Boom> {
    dependency(x, false).await
}

/// The dependency behind both attributes.
#[fusebox::breaker(name = "bench-attr-both")]
#[fusebox::bulkhead(pool = 64, name = "bench-attr-both")]
pub async fn attr_both(x: u64) -> Result<u64, Boom> {
    dependency(x, false).await
}

/// Every tenth call fails: a 10 % failure rate, below every threshold used here (50 %).
pub fn tenth(i: u64) -> bool {
    i % 10 == 9
}

/// Polls `fut` to completion on this thread. The futures benchmarked here never wait, so the
/// loop runs once; it spins rather than parks if one ever does.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::hint::spin_loop();
    }
}

/// The settings shared by fusebox and its peers, chosen to match fusebox's defaults.
pub mod settings {
    use super::Duration;

    /// Failure rate that opens the breaker.
    pub const FAILURE_RATE: u8 = 50;
    /// Calls in the window before a rate is judged.
    pub const MIN_CALLS: u32 = 20;
    /// Time window.
    pub const WINDOW: Duration = Duration::from_secs(30);
    /// Count window, for the count-based cases.
    pub const WINDOW_CALLS: u32 = 20;
    /// Open period of the open-state cases: long enough never to end during a run.
    pub const OPEN_LONG: Duration = Duration::from_secs(3600);
    /// Open period of the half-open cases: over before the first measured call.
    pub const OPEN_SHORT: Duration = Duration::from_micros(1);
    /// Bulkhead pool.
    pub const POOL: usize = 64;
    /// Latency bound of the timed cases (`trip_p95`).
    pub const SLOW_BOUND: Duration = Duration::from_millis(500);
    /// Timeout of the timed cases.
    pub const TIMEOUT: Duration = Duration::from_secs(3);
}
