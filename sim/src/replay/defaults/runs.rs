//! The issue's own runs beside the replays: its real run in virtual time (the slow payment
//! dependency behind a pool of 5, or an adaptive limit), an hour of a healthy but noisy
//! dependency, and Semian's dead instances under a timeout alone.

use std::io;
use std::time::Duration;

use super::ms;
use crate::{Call, Dependency, Latency, Phase, Report, Route, Server};
use fusebox_runtime::{Breaker, BreakerBuilder, Bulkhead};

/// What the run behind a small bulkhead measured: see [`behind_bulkhead`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BulkheadRun {
    /// The run.
    pub report: Report,
    /// From the slowdown until the breaker opened (`None`: not while slow).
    pub open_after: Option<Duration>,
    /// From the healing until the breaker closed for good (`None`: never).
    pub back_after: Option<Duration>,
    /// From the healing until every call is admitted again (the ramp's end).
    pub all_traffic_after: Option<Duration>,
    /// Share of `/orders` answered while payments was slow.
    pub orders_answered: f64,
}

/// The slowdown of issue 26's real run: payments starts answering in 8 s.
pub const SLOW_AT: Duration = Duration::from_secs(30);
/// How long it stays slow.
pub const SLOW_FOR: Duration = Duration::from_secs(25);

/// Issue 26's real run in virtual time: a checkout with 20 database connections, `/orders`
/// at 200/s and `/checkout` at 50/s (open loop); checkout calls payments through `#[bulkhead(pool
/// = 5)]` and `breaker`. Payments answers in 20 ms (±20 %), then in 8 s for 25 s, then in 20 ms.
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::replay::defaults::{behind_bulkhead, card_line};
/// let card = card_line("payments", Duration::from_millis(300), Duration::from_secs(2));
/// let run = behind_bulkhead(&card).unwrap();
/// assert!(run.open_after.unwrap() <= Duration::from_secs(3));
/// assert!(run.back_after.unwrap() <= Duration::from_secs(15));
/// ```
pub fn behind_bulkhead(breaker: &BreakerBuilder) -> io::Result<BulkheadRun> {
    behind_pool(breaker, 5)
}

/// [`behind_bulkhead`] behind a fixed pool of `pool` slots (the design card's is 60).
///
/// ```
/// use std::time::Duration;
/// use fusebox::Breaker;
/// let card = Breaker::builder("payments").trip_p95(Duration::from_millis(500)).half_open_pct(5);
/// let run = fusebox_sim::replay::defaults::behind_pool(&card, 60).unwrap();
/// assert!(run.open_after.unwrap() <= Duration::from_secs(2));
/// ```
pub fn behind_pool(breaker: &BreakerBuilder, pool: usize) -> io::Result<BulkheadRun> {
    let pool = Bulkhead::builder("payments")
        .pool(pool)
        .build_detached()
        .map_err(io::Error::other)?;
    behind(breaker, &pool)
}

/// [`behind_bulkhead`] with `#[bulkhead(limit = "adaptive")]` in place of the pool of 5: the
/// limit is not told the pool, and starts where an adaptive pool's defaults start it.
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::replay::defaults::{behind_adaptive_bulkhead, card_line};
/// let card = card_line("payments", Duration::from_millis(300), Duration::from_secs(2));
/// let run = behind_adaptive_bulkhead(&card).unwrap();
/// assert!(run.orders_answered >= 0.99);
/// ```
pub fn behind_adaptive_bulkhead(breaker: &BreakerBuilder) -> io::Result<BulkheadRun> {
    let pool = Bulkhead::builder("payments")
        .adaptive()
        .build_detached()
        .map_err(io::Error::other)?;
    behind(breaker, &pool)
}

fn behind(breaker: &BreakerBuilder, pool: &Bulkhead) -> io::Result<BulkheadRun> {
    let healed = SLOW_AT + SLOW_FOR;
    let end = healed + Duration::from_secs(60);
    let payments = Dependency::builder("payments", Latency::uniform(ms(16), ms(24)))
        .phase(SLOW_AT, Phase::Slow(Latency::fixed(Duration::from_secs(8))))
        .phase(healed, Phase::Healthy)
        .build();
    let b = breaker.build_detached().map_err(io::Error::other)?;
    let report = Server::new(20)
        .route(Route::new("orders", 200.0).work(ms(5)))
        .route(
            Route::new("checkout", 50.0).call(
                Call::new(&payments)
                    .breaker(&b)
                    .bulkhead(pool)
                    .fallback_cost(ms(1)),
            ),
        )
        .window("healthy", Duration::ZERO, SLOW_AT)
        .window("slow", SLOW_AT, healed)
        .window("healed", healed, end)
        .run_for(end)?;
    let t = report.breakers.first();
    let back_after = t.and_then(|t| t.recovery_after(healed));
    let ramp = b.config().ramp().unwrap_or_default();
    Ok(BulkheadRun {
        open_after: t
            .and_then(|t| t.first_open_after(SLOW_AT))
            .filter(|at| *at < healed)
            .map(|at| at - SLOW_AT),
        back_after,
        all_traffic_after: back_after.map(|d| d + ramp),
        orders_answered: report
            .window("slow")
            .and_then(|w| w.route("orders"))
            .map_or(0.0, |r| r.counts.answered_in_time_share()),
        report,
    })
}

/// An hour of a healthy dependency with noise: 50 calls/s, 50 ms ±20 %, 1 % of calls failing
/// at random. Returns the run and how many times the breaker opened.
///
/// ```no_run
/// use std::time::Duration;
/// use fusebox_sim::replay::defaults::{noisy_hour, timeout_only};
/// let b = timeout_only("search", Duration::from_millis(500));
/// let (_, opened) = noisy_hour(&b, Duration::from_secs(3600)).unwrap();
/// assert_eq!(opened, 0);
/// ```
pub fn noisy_hour(breaker: &BreakerBuilder, length: Duration) -> io::Result<(Report, usize)> {
    let dep = Dependency::builder("search", Latency::uniform(ms(40), ms(60)))
        .phase(Duration::ZERO, Phase::Failing(0.01))
        .seed(26)
        .build();
    let b = breaker.build_detached().map_err(io::Error::other)?;
    let report = Server::new(20)
        .route(Route::new("search", 50.0).call(Call::new(&dep).breaker(&b)))
        .sample_every(Duration::from_secs(60))
        .run_for(length)?;
    let opened = report.breakers.first().map_or(0, |t| t.times_opened());
    Ok((report, opened))
}

/// Semian's 42 Redis instances, all hanging from 10 s, on 2 threads, each behind a breaker
/// given only the client's 250 ms timeout: the threads' busy share between `from` and `to`
/// (every busy moment is waste: the instances never answer).
///
/// ```no_run
/// use std::time::Duration;
/// use fusebox_sim::replay::defaults::semian_waste;
/// let h = Duration::from_secs(3600);
/// assert!(semian_waste(42, 10.0, 2 * h, 3 * h).unwrap() <= 0.04);
/// ```
pub fn semian_waste(instances: usize, rate: f64, from: Duration, to: Duration) -> io::Result<f64> {
    let cfg = Breaker::builder("redis")
        .timeout(ms(250))
        .config()
        .map_err(io::Error::other)?;
    let n = instances.max(1);
    let gap = 1.0 / rate.max(0.01);
    let mut server = Server::new(2)
        .window("steady state", from, to)
        .sample_every(Duration::from_secs(60));
    for i in 0..n {
        let dep = Dependency::builder(format!("redis-{i}"), Latency::fixed(ms(1)))
            .phase(Duration::from_secs(10), Phase::Hang)
            .build();
        let breaker = Breaker::detached(cfg.with_key(&i.to_string()));
        let offset = Duration::from_secs_f64(gap * i as f64 / n as f64);
        server = server.route(
            Route::new(format!("redis/{i}"), rate)
                .offset(offset)
                .call(Call::new(&dep).breaker(&breaker)),
        );
    }
    let report = server.run_for(to)?;
    Ok(report.window("steady state").map_or(0.0, |w| w.utilization))
}
