//! Replay 6 (issue 17): the adaptive bulkhead beside the tuned fixed pool, in the lesson's
//! step 5 (the report server stuck, every call ending at its 5 s timeout, in a busy hour) and
//! in the Semian case (42 Redis instances hanging behind one bulkhead). The adaptive limit is
//! not told the pool: it starts at its default (20) and bounds (1..=200).
//!
//! Two figures each: the share of the server's workers left to the other routes while the
//! dependency hangs (the fixed pool's own share is the yardstick: within 2 points), and how
//! long after the dependency recovers the adaptive limit is back to what it was before.

use std::io;
use std::time::Duration;

use crate::{Call, Dependency, Latency, Phase, Report, Route, Server};
use fusebox_runtime::{tune, Breaker, Bulkhead, BulkheadBuilder};

/// Parameters of the adaptive replay.
///
/// ```
/// use fusebox_sim::replay::adaptive::AdaptiveSetup;
/// assert_eq!(AdaptiveSetup::default().stall.as_secs(), 60);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AdaptiveSetup {
    /// 1.0 is the lesson's server (200 workers); it scales workers and rates together.
    pub scale: f64,
    /// How long the dependency hangs before it answers again.
    pub stall: Duration,
}

impl Default for AdaptiveSetup {
    fn default() -> Self {
        AdaptiveSetup {
            scale: 1.0,
            stall: Duration::from_secs(60),
        }
    }
}

/// One pool (fixed or adaptive) through one outage.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PoolRun {
    /// Share of all workers not held by the hanging dependency's calls, while it hangs
    /// (after the first 10 s), as a fraction.
    pub others_share: f64,
    /// Share of the other routes' requests answered while it hangs.
    pub others_answered: f64,
    /// The pool's slots just before the outage.
    pub limit_before: usize,
    /// The fewest slots during the outage.
    pub limit_low: usize,
    /// From the dependency's recovery until the slots were back to `limit_before` (zero for a
    /// fixed pool; `None` if never within the run).
    pub recovered_after: Option<Duration>,
    /// The run.
    pub report: Report,
}

/// Both cases, each with both pools.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Adaptive {
    /// Lesson step 5 with the tuned pool of 60.
    pub lesson_fixed: PoolRun,
    /// Lesson step 5 with the adaptive limit.
    pub lesson_adaptive: PoolRun,
    /// Semian's 42 instances behind the tuned pool.
    pub semian_fixed: PoolRun,
    /// Semian's 42 instances behind the adaptive limit.
    pub semian_adaptive: PoolRun,
}

const WARM: Duration = Duration::from_secs(40);
const AFTER: Duration = Duration::from_secs(40);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Measures `report`: the hanging route(s) are every route but `others`.
fn measure(report: Report, others: &str, down: Duration, up: Duration) -> PoolRun {
    let w = report.window("stuck");
    let total = report.workers.max(1) as f64;
    let others_share = w.map_or(0.0, |w| {
        let held = w.mean_busy_without(others);
        1.0 - held / total
    });
    let others_answered = w
        .and_then(|w| w.route(others))
        .map_or(0.0, |r| r.counts.answered_in_time_share());
    let step = report.series.step.as_secs_f64().max(1e-9);
    let at = |t: Duration| ((t.as_secs_f64() / step) as usize).saturating_sub(1);
    let pool = &report.series.pool;
    let limit_before = pool.get(at(down)).copied().unwrap_or(0);
    let (from, to) = (at(down), at(up).min(pool.len()));
    let limit_low = pool[from.min(to)..to].iter().copied().min().unwrap_or(0);
    let recovered_after = pool
        .iter()
        .enumerate()
        .skip(at(up))
        .find(|(_, &p)| p >= limit_before)
        .map(|(i, _)| Duration::from_secs_f64(((i + 1) as f64 * step - up.as_secs_f64()).max(0.0)));
    PoolRun {
        others_share,
        others_answered,
        limit_before,
        limit_low,
        recovered_after,
        report,
    }
}

/// Lesson step 5, with a recovery: statements at 20/s (2 s each) until the busy hour brings
/// 60/s and the report server hangs; it answers again after `stall`.
fn lesson_run(setup: &AdaptiveSetup, pool: &BulkheadBuilder) -> io::Result<PoolRun> {
    let k = setup.scale.max(0.01);
    let workers = (200.0 * k).round() as usize;
    let (down, up) = (WARM, WARM + setup.stall);
    let reports = Dependency::builder("reports", Latency::fixed(Duration::from_secs(2)))
        .phase(down, Phase::Hang)
        .phase(up, Phase::Healthy)
        .build();
    let price = Dependency::builder("price", Latency::fixed(ms(50))).build();
    let bulkhead = pool.build_detached().map_err(io::Error::other)?;
    let report = Server::new(workers)
        .route(Route::new("views", 400.0 * k).call(Call::new(&price).timeout(ms(300))))
        .route(Route::new("status", 50.0 * k).work(ms(50)))
        .route(
            Route::new("statements", 20.0 * k)
                .rate_from(down, 60.0 * k)
                .call(
                    Call::new(&reports)
                        .bulkhead(&bulkhead)
                        .timeout(Duration::from_secs(5))
                        .fallback_cost(ms(1)),
                ),
        )
        .window("stuck", down + Duration::from_secs(10), up)
        .sample_every(ms(500))
        .run_for(up + AFTER)?;
    // The others here are every route but statements: measured as "all but statements".
    let mut run = measure(report, "statements", down, up);
    let w = run.report.window("stuck");
    let total = run.report.workers.max(1) as f64;
    run.others_share = w.map_or(0.0, |w| {
        let statements = w.route("statements").map_or(0.0, |r| r.mean_busy);
        1.0 - statements / total
    });
    run.others_answered = w.map_or(0.0, |w| {
        w.counts_without("statements").answered_in_time_share()
    });
    Ok(run)
}

/// Semian's 42 Redis instances (1 ms, 0.25 s timeout, 10 calls/s each, a breaker each with
/// the write-up's first configuration) behind one bulkhead, on a 20-thread server that also
/// renders pages (200/s, 40 ms); every instance hangs for `stall`.
fn semian_run(setup: &AdaptiveSetup, pool: &BulkheadBuilder) -> io::Result<PoolRun> {
    let (down, up) = (WARM, WARM + setup.stall);
    let bulkhead = pool.build_detached().map_err(io::Error::other)?;
    let cfg = super::semian::before_breaker()
        .config()
        .map_err(io::Error::other)?;
    let mut server = Server::new(20)
        .route(Route::new("pages", 200.0).work(ms(40)))
        .window("stuck", down + Duration::from_secs(10), up)
        .sample_every(ms(500));
    for i in 0..42 {
        let dep = Dependency::builder(format!("redis-{i}"), Latency::fixed(ms(1)))
            .phase(down, Phase::Hang)
            .phase(up, Phase::Healthy)
            .build();
        let breaker = Breaker::detached(cfg.with_key(&i.to_string()));
        server = server.route(
            Route::new(format!("redis/{i}"), 10.0)
                .offset(Duration::from_secs_f64(0.1 * i as f64 / 42.0))
                .call(Call::new(&dep).breaker(&breaker).bulkhead(&bulkhead)),
        );
    }
    let report = server.run_for(up + AFTER)?;
    Ok(measure(report, "pages", down, up))
}

/// Runs both cases with the tuned fixed pool and with the adaptive limit.
///
/// ```no_run
/// use fusebox_sim::replay::adaptive::{adaptive, AdaptiveSetup};
/// let a = adaptive(&AdaptiveSetup::default()).unwrap();
/// assert!(a.lesson_adaptive.others_share >= a.lesson_fixed.others_share - 0.02);
/// ```
pub fn adaptive(setup: &AdaptiveSetup) -> io::Result<Adaptive> {
    let k = setup.scale.max(0.01);
    let lesson_pool = tune::pool_size(20.0 * k, Duration::from_secs(2), 1.5);
    let semian_pool = tune::pool_size(420.0, ms(1), 1.5);
    let fixed = |name: &str, n: usize| Bulkhead::builder(name).pool(n);
    let adaptive = |name: &str| Bulkhead::builder(name).adaptive();
    Ok(Adaptive {
        lesson_fixed: lesson_run(setup, &fixed("reports", lesson_pool))?,
        lesson_adaptive: lesson_run(setup, &adaptive("reports"))?,
        semian_fixed: semian_run(setup, &fixed("redis", semian_pool))?,
        semian_adaptive: semian_run(setup, &adaptive("redis"))?,
    })
}
