//! Replay 2, `seeds/breaker-and-bulkhead-lesson.txt`: the 200-worker API server, steps 1–5,
//! measured by the simulation (the lesson's figures are arithmetic; these are not).

use std::io;
use std::time::Duration;

use crate::{Call, Dependency, Latency, Phase, Report, Route, Server};
use fusebox_runtime::{tune, Breaker, BreakerBuilder, Bulkhead};

/// Parameters of the lesson replay. `scale` multiplies workers, rates and the pool together,
/// which keeps every share the same and makes debug-build tests cheap.
///
/// ```
/// use fusebox_sim::replay::lesson::LessonSetup;
/// assert_eq!(LessonSetup::default().scale, 1.0);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LessonSetup {
    /// 1.0 is the lesson's server: 200 workers, 400 + 50 + 20 requests per second.
    pub scale: f64,
    /// Length of each measured step.
    pub step: Duration,
}

impl Default for LessonSetup {
    fn default() -> Self {
        LessonSetup {
            scale: 1.0,
            step: Duration::from_secs(60),
        }
    }
}

/// What the lesson replay measured (see [`lesson()`]). Shares are fractions (0.31 is 31 %).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Lesson {
    /// Steps 1 and 2: normal, then the price server down with a timeout only.
    pub timeout_only: Report,
    /// Step 3: the same outage with a breaker.
    pub with_breaker: Report,
    /// Step 4: the report server stalls in a busy hour, one shared pool.
    pub stall: Report,
    /// Step 5: the same stall with a bulkhead around the report server.
    pub with_bulkhead: Report,
    /// Busy-worker share of step 1 (lesson: 31 %).
    pub step1: f64,
    /// Step 2 (lesson: 81 %).
    pub step2: f64,
    /// Step 3 (lesson: 21 %).
    pub step3: f64,
    /// Step 4's busy share (every worker).
    pub step4: f64,
    /// Step 4: from the stall until every worker is busy (lesson: about 3.3 s).
    pub step4_all_stuck: Option<Duration>,
    /// Step 5: busy share of the workers outside the report pool (lesson: 16 %).
    pub step5: f64,
    /// Step 3: from the outage until the breaker opened (lesson: about 0.3 s).
    pub step3_open_after: Option<Duration>,
    /// Calls per second reaching the price server in step 2, and in step 3 once the breaker
    /// opened (lesson: 400 and about 0.3).
    pub price_calls_per_s: (f64, f64),
    /// Step 5: statements started per second and refused at once per second (lesson: 12 and 48).
    pub step5_started_refused_per_s: (f64, f64),
    /// The report pool, from `tune::pool_size` (lesson: 60).
    pub pool: usize,
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Runs the four configurations.
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::replay::lesson::{lesson, LessonSetup};
/// let mut setup = LessonSetup::default();
/// setup.scale = 0.1; // 20 workers, 40 + 5 + 2 requests a second: the same shares
/// setup.step = Duration::from_secs(20);
/// let l = lesson(&setup).unwrap();
/// assert!((l.step1 - 0.31).abs() < 0.03, "step 1: {}", l.step1);
/// assert!((l.step2 - 0.81).abs() < 0.03, "step 2: {}", l.step2);
/// ```
pub fn lesson(setup: &LessonSetup) -> io::Result<Lesson> {
    let k = setup.scale.max(0.01);
    let step = setup.step.max(Duration::from_secs(10));
    let workers = (200.0 * k).round() as usize;
    // Steady state needs a few seconds: statements take 2 s each.
    let warm = Duration::from_secs(10);
    let t_out = warm + step;
    let end = t_out + step;

    let price = |fails_at: Duration| {
        Dependency::builder("price", Latency::fixed(ms(50)))
            .phase(fails_at, Phase::Hang)
            .build()
    };
    let reports = |stalls_at: Duration| {
        Dependency::builder("reports", Latency::fixed(Duration::from_secs(2)))
            .phase(stalls_at, Phase::Hang)
            .build()
    };
    let status = || Route::new("status", 50.0 * k).work(ms(50));
    let statements = |call: Call, busy_from: Duration| {
        Route::new("statements", 20.0 * k)
            .rate_from(busy_from, 60.0 * k)
            .call(call)
    };
    let never = Duration::from_secs(u64::MAX / 4);

    // Steps 1 and 2: timeout only.
    let p = price(t_out);
    let r = reports(never);
    let timeout_only = Server::new(workers)
        .route(
            Route::new("views", 400.0 * k)
                .call(Call::new(&p).timeout(ms(300)).fallback_cost(ms(1))),
        )
        .route(status())
        .route(statements(
            Call::new(&r).timeout(Duration::from_secs(5)),
            never,
        ))
        .window("step 1", warm, t_out)
        .window("step 2", t_out, end)
        .run_for(end)?;

    // Step 3: the same outage, with the lesson's breaker.
    let (with_breaker, step3_open_after) = step3(setup, &lesson_breaker())?;

    // Step 4: the report server stalls as a busy hour starts; one shared pool.
    let p = price(never);
    let r = reports(t_out);
    let views = |p: &Dependency| Route::new("views", 400.0 * k).call(Call::new(p).timeout(ms(300)));
    let stall = Server::new(workers)
        .route(views(&p))
        .route(status())
        .route(statements(
            Call::new(&r).timeout(Duration::from_secs(5)),
            t_out,
        ))
        .window("before", warm, t_out)
        .window("step 4", t_out, end)
        .run_for(end)?;

    // Step 5: the same stall; the report server gets a pool of its own.
    let pool = tune::pool_size(20.0 * k, Duration::from_secs(2), 1.5);
    let bulkhead = Bulkhead::builder("reports")
        .pool(pool)
        .build_detached()
        .map_err(io::Error::other)?;
    let p = price(never);
    let r = reports(t_out);
    let settled = t_out + Duration::from_secs(10);
    let with_bulkhead = Server::new(workers)
        .route(views(&p))
        .route(status())
        .route(statements(
            Call::new(&r)
                .bulkhead(&bulkhead)
                .timeout(Duration::from_secs(5))
                .fallback_cost(ms(1)),
            t_out,
        ))
        .window("before", warm, t_out)
        .window("stall begins", t_out, settled)
        .window("step 5", settled, end)
        .run_for(end)?;

    let util = |r: &Report, w: &str| r.window(w).map_or(0.0, |w| w.utilization);
    let per_s = |r: &Report, w: &str, f: fn(&crate::Counts) -> u64| {
        r.window(w).map_or(0.0, |w| {
            let c = w.route(if w.name == "step 5" {
                "statements"
            } else {
                "views"
            });
            let len = (w.to - w.from).as_secs_f64();
            c.map_or(0.0, |c| f(&c.counts) as f64 / len)
        })
    };
    let step5 = with_bulkhead.window("step 5").map_or(0.0, |w| {
        let outside = workers.saturating_sub(pool).max(1) as f64;
        w.mean_busy_without("statements") / outside
    });
    Ok(Lesson {
        step1: util(&timeout_only, "step 1"),
        step2: util(&timeout_only, "step 2"),
        step3: util(&with_breaker, "step 3"),
        step4: util(&stall, "step 4"),
        step4_all_stuck: stall.window("step 4").and_then(|w| w.full_after),
        step5,
        step3_open_after,
        price_calls_per_s: (
            per_s(&timeout_only, "step 2", |c| c.sent),
            per_s(&with_breaker, "breaker open", |c| c.sent),
        ),
        step5_started_refused_per_s: (
            per_s(&with_bulkhead, "step 5", |c| c.sent),
            per_s(&with_bulkhead, "step 5", |c| c.rejected),
        ),
        pool,
        timeout_only,
        with_breaker,
        stall,
        with_bulkhead,
    })
}

/// The lesson's breaker (step 3): 10 calls, half failing, 300 ms timeout, 10 s open, 3 trials.
///
/// ```
/// let c = fusebox_sim::replay::lesson::lesson_breaker().config().unwrap();
/// assert_eq!(c.open_for(), std::time::Duration::from_secs(10));
/// ```
pub fn lesson_breaker() -> BreakerBuilder {
    Breaker::builder("price")
        .window_calls(10)
        .failure_rate(50)
        .timeout(ms(300))
        .open_for(Duration::from_secs(10))
        .half_open_calls(3)
}

/// Step 3 with `breaker` around the price server: the run, and from the price server's hang
/// until the breaker opened (`None`: never).
///
/// ```no_run
/// use fusebox_sim::replay::lesson::{lesson_breaker, step3, LessonSetup};
/// let (_, opened) = step3(&LessonSetup::default(), &lesson_breaker()).unwrap();
/// assert!(opened.unwrap() < std::time::Duration::from_secs(1));
/// ```
pub fn step3(
    setup: &LessonSetup,
    breaker: &BreakerBuilder,
) -> io::Result<(Report, Option<Duration>)> {
    let k = setup.scale.max(0.01);
    let step = setup.step.max(Duration::from_secs(10));
    let workers = (200.0 * k).round() as usize;
    let warm = Duration::from_secs(10);
    let t_out = warm + step;
    let end = t_out + step;
    let p = Dependency::builder("price", Latency::fixed(ms(50)))
        .phase(t_out, Phase::Hang)
        .build();
    let r = Dependency::builder("reports", Latency::fixed(Duration::from_secs(2))).build();
    let breaker = breaker.build_detached().map_err(io::Error::other)?;
    let report = Server::new(workers)
        .route(
            Route::new("views", 400.0 * k)
                .call(Call::new(&p).breaker(&breaker).fallback_cost(ms(1))),
        )
        .route(Route::new("status", 50.0 * k).work(ms(50)))
        .route(
            Route::new("statements", 20.0 * k).call(Call::new(&r).timeout(Duration::from_secs(5))),
        )
        .window("step 1", warm, t_out)
        .window("step 3", t_out, end)
        .window("breaker open", t_out + Duration::from_secs(1), end)
        .run_for(end)?;
    let opened = report
        .breaker("price")
        .and_then(|t| t.first_open_after(t_out))
        .map(|at| at - t_out);
    Ok((report, opened))
}
