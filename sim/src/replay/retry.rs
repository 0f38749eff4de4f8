//! Replay 8, `seeds/slow-not-down.txt` with callers that retry ("Retries pile on top of
//! requests that are already struggling"), and a flaky dependency where retries earn their keep.
//!
//! Three ways to call the slow payment service, each through the same breaker, the write-up's
//! own (it counts errors and timeouts only: `failure_rate = 50`, `window = 30s`, `open_for = 30s`,
//! `timeout = 2s`), so calls time
//! out for a while before it opens:
//! - no retry;
//! - a hand-written loop: four attempts, everything retried (timeouts and refusals included),
//!   no budget: what most services do today;
//! - fusebox's [`Retry`]: four attempts, the call marked idempotent so its timeouts may be
//!   retried, on the default budget (20 % of the calls of the last 10 s plus 1 a second).
//!
//! And a payment service failing 5 % of its calls at random, healthy latency, with and without
//! fusebox's retry.

use std::io;
use std::time::Duration;

use fusebox_runtime::retry::Retry;
use fusebox_runtime::{Breaker, BreakerBuilder, Error};

use crate::{Call, Dependency, Latency, Phase, Report, Route, Server, SimError};

/// Parameters of the retry replay.
///
/// ```
/// use fusebox_sim::replay::retry::RetrySetup;
/// assert_eq!(RetrySetup::default().attempts, 4);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RetrySetup {
    /// Multiplies the pool and every rate (shares stay the same).
    pub scale: f64,
    /// Attempts per call, the first included, for both retrying callers.
    pub attempts: u32,
    /// How long the payment service stays slow.
    pub slow_for: Duration,
}

impl Default for RetrySetup {
    fn default() -> Self {
        RetrySetup {
            scale: 1.0,
            attempts: 4,
            slow_for: Duration::from_secs(120),
        }
    }
}

/// How a caller retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// One attempt.
    NoRetry,
    /// Every error retried, no budget, a fixed 100 ms pause.
    Naive,
    /// fusebox's [`Retry`], idempotent, default budget.
    Fusebox,
}

/// What one caller measured in the slow replay.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RetryRun {
    /// The run.
    pub report: Report,
    /// From the slowdown until the breaker opened.
    pub trip_after: Option<Duration>,
    /// Calls the payment service received per checkout request while slow.
    pub load_per_request: f64,
    /// Calls the payment service received in the first 5 s of the slowdown, per checkout
    /// request of those 5 s: the pile-up before the breaker can open.
    pub load_first_5s: f64,
    /// Mean busy share of the shared pool while the service was slow.
    pub utilization: f64,
    /// Share of the unrelated requests shed for want of a worker while slow.
    pub others_shed: f64,
}

/// The whole replay: see [`retry()`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Retries {
    /// Slow, no retry.
    pub none: RetryRun,
    /// Slow, the hand-written loop.
    pub naive: RetryRun,
    /// Slow, fusebox's retry.
    pub fusebox: RetryRun,
    /// Flaky (5 % failures): share of checkouts answered `Ok` without a retry.
    pub flaky_ok_without: f64,
    /// Flaky: share answered `Ok` with fusebox's retry.
    pub flaky_ok_with: f64,
    /// Flaky: calls the service received per checkout with fusebox's retry.
    pub flaky_load_with: f64,
}

const SLOW_AT: Duration = Duration::from_secs(60);

/// The breaker of every caller: the write-up's, counting errors and timeouts only.
///
/// ```
/// let c = fusebox_sim::replay::retry::error_breaker().config().unwrap();
/// assert_eq!(c.failure_rate(), 50);
/// ```
pub fn error_breaker() -> BreakerBuilder {
    // Every setting the write-up's breaker had is given, so nothing is derived from `timeout`.
    Breaker::builder("payments")
        .failure_rate(50)
        .window(Duration::from_secs(30))
        .open_for(Duration::from_secs(30))
        .timeout(Duration::from_secs(2))
}

/// The call of one caller: the breaker around the dependency, retried as the caller does.
fn call(
    dep: &Dependency,
    b: &Breaker,
    caller: Caller,
    attempts: u32,
    name: &str,
) -> io::Result<Call> {
    let retry = Retry::builder(name)
        .attempts(attempts)
        .idempotent(true)
        .attempt_timeout(Duration::from_secs(2))
        .build()
        .map_err(io::Error::other)?;
    let b2 = b.clone();
    Ok(Call::function(dep, move |dep| {
        let (b, retry) = (b2.clone(), retry.clone());
        async move {
            let once = || {
                let (b, dep) = (b.clone(), dep.clone());
                async move { b.call(async move { dep.call().await }).await }
            };
            let r: Result<(), Error<SimError>> = match caller {
                Caller::NoRetry => once().await,
                Caller::Fusebox => retry.run(once).await,
                Caller::Naive => {
                    let mut r = once().await;
                    for _ in 1..attempts {
                        if r.is_ok() {
                            break;
                        }
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        r = once().await;
                    }
                    r
                }
            };
            r.map_err(|e| match e {
                Error::Rejected(r) => SimError::from(r),
                Error::Failed(e) => e,
            })
        }
    })
    .watch(b))
}

/// Runs the slow replay for one caller: checkout calls payments; orders and cart share the pool.
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::replay::retry::{run_slow, Caller, RetrySetup};
/// let mut setup = RetrySetup::default();
/// setup.scale = 0.2;
/// setup.slow_for = Duration::from_secs(30);
/// let none = run_slow(&setup, Caller::NoRetry).unwrap();
/// let naive = run_slow(&setup, Caller::Naive).unwrap();
/// assert!(naive.load_first_5s > 1.5 * none.load_first_5s);
/// ```
pub fn run_slow(setup: &RetrySetup, caller: Caller) -> io::Result<RetryRun> {
    let k = setup.scale.max(0.01);
    let ms = Duration::from_millis;
    let back_at = SLOW_AT + setup.slow_for;
    let end = back_at + Duration::from_secs(60);
    let payments = Dependency::builder("payments", Latency::uniform(ms(60), ms(100)))
        .phase(SLOW_AT, Phase::Slow(Latency::fixed(Duration::from_secs(8))))
        .phase(back_at, Phase::Healthy)
        .build();
    let b = error_breaker().build_detached().map_err(io::Error::other)?;
    let name = format!("replay-retry-{caller:?}-{}", setup.attempts);
    let checkout = 20.0 * k;
    let report = Server::new((100.0 * k).round() as usize)
        .route(
            Route::new("checkout", checkout)
                .call(call(&payments, &b, caller, setup.attempts, &name)?)
                .patience(Duration::from_secs(2)),
        )
        .route(Route::new("orders", 40.0 * k).work(ms(20)))
        .route(Route::new("cart", 40.0 * k).work(ms(20)))
        .window("normal", Duration::ZERO, SLOW_AT)
        .window("first 5 s", SLOW_AT, SLOW_AT + Duration::from_secs(5))
        .window("slow", SLOW_AT, back_at)
        .window("healthy again", back_at, end)
        .sample_every(Duration::from_secs(1))
        .run_for(end)?;
    let w = report.window("slow");
    let sent = |w: Option<&crate::WindowReport>| {
        w.and_then(|w| w.route("checkout")).map_or(0.0, |c| {
            c.counts.sent as f64 / c.counts.arrived.max(1) as f64
        })
    };
    let others_shed = w.map_or(0.0, |w| w.counts_without("checkout").shed_share());
    Ok(RetryRun {
        trip_after: report
            .breaker("payments")
            .and_then(|t| t.first_open_after(SLOW_AT))
            .filter(|at| *at < back_at)
            .map(|at| at - SLOW_AT),
        load_per_request: sent(w),
        load_first_5s: sent(report.window("first 5 s")),
        utilization: w.map_or(0.0, |w| w.utilization),
        others_shed,
        report,
    })
}

/// The flaky replay: 5 % of calls fail at random; the share of checkouts answered `Ok`, and
/// the calls the service received per checkout.
pub fn run_flaky(setup: &RetrySetup, caller: Caller) -> io::Result<(f64, f64)> {
    let k = setup.scale.max(0.01);
    let ms = Duration::from_millis;
    let end = Duration::from_secs(300);
    let payments = Dependency::builder("payments", Latency::uniform(ms(60), ms(100)))
        .phase(Duration::ZERO, Phase::Failing(0.05))
        .seed(7)
        .build();
    let b = error_breaker().build_detached().map_err(io::Error::other)?;
    let name = format!("replay-retry-flaky-{caller:?}-{}", setup.attempts);
    let report = Server::new((100.0 * k).round() as usize)
        .route(
            Route::new("checkout", 20.0 * k)
                .call(call(&payments, &b, caller, setup.attempts, &name)?)
                .patience(Duration::from_secs(5)),
        )
        .run_for(end)?;
    let c = report
        .route("checkout")
        .map(|r| r.counts)
        .unwrap_or_default();
    let ok = c.ok as f64 / c.arrived.max(1) as f64;
    let load = payments.stats().received as f64 / c.arrived.max(1) as f64;
    Ok((ok, load))
}

/// Runs the whole replay.
pub fn retry(setup: &RetrySetup) -> io::Result<Retries> {
    let (flaky_ok_without, _) = run_flaky(setup, Caller::NoRetry)?;
    let (flaky_ok_with, flaky_load_with) = run_flaky(setup, Caller::Fusebox)?;
    Ok(Retries {
        none: run_slow(setup, Caller::NoRetry)?,
        naive: run_slow(setup, Caller::Naive)?,
        fusebox: run_slow(setup, Caller::Fusebox)?,
        flaky_ok_without,
        flaky_ok_with,
        flaky_load_with,
    })
}
