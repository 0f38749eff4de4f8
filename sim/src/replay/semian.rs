//! Replay 4, `seeds/semian-misconfigured.txt`: a worker with 2 threads and one breaker per
//! Redis instance, 42 instances all down. Steady-state wasted utilization of the write-up's two
//! configurations, measured, next to [`tune::extra_utilization`]'s prediction.
//!
//! Every busy moment of a thread here is waste: requests do nothing but call their instance,
//! which hangs until the probe's timeout. The equation's 263 % is a *demand*: more than the
//! two threads can give. So the untuned configuration is measured twice: on 2 threads (they
//! saturate, and requests are shed) and on unbounded threads (the thread-seconds demanded,
//! divided by 2). The tuned one fits easily and is measured on its 2 threads.

use std::io;
use std::time::Duration;

use crate::{Call, Dependency, Latency, Phase, Report, Route, Server};
use fusebox_runtime::{tune, Breaker, BreakerBuilder};

/// Parameters of the Semian replay.
///
/// ```
/// use fusebox_sim::replay::semian::SemianSetup;
/// let s = SemianSetup::default();
/// assert_eq!((s.instances, s.threads), (42, 2));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SemianSetup {
    /// Redis instances, all failing.
    pub instances: usize,
    /// Threads of the worker.
    pub threads: usize,
    /// Requests per second to each instance.
    pub rate_per_instance: f64,
    /// Steady-state cycles measured (each one open period plus a probe).
    pub cycles: u32,
}

impl Default for SemianSetup {
    fn default() -> Self {
        SemianSetup {
            instances: 42,
            threads: 2,
            rate_per_instance: 10.0,
            cycles: 5,
        }
    }
}

/// One configuration, measured: see [`run_one`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SemianRun {
    /// `tune::extra_utilization` for it (a fraction: 2.625 is 263 %).
    pub predicted: f64,
    /// Busy share of the worker's threads in the steady state (at most 1).
    pub measured: f64,
    /// Thread-seconds demanded per second over the thread count, with threads unbounded.
    pub demand: f64,
    /// Share of requests shed for want of a free thread in the steady state.
    pub shed: f64,
    /// The run on the worker's threads.
    pub report: Report,
}

/// Both configurations: see [`semian()`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Semian {
    /// 0.25 s probe timeout, 2 s open.
    pub before: SemianRun,
    /// 50 ms probe timeout, 30 s open.
    pub after: SemianRun,
}

/// Semian's first configuration: 0.25 s timeout, error_timeout 2 s, one trial.
///
/// ```
/// use std::time::Duration;
/// let c = fusebox_sim::replay::semian::before_breaker().config().unwrap();
/// assert_eq!(c.half_open_timeout(), Some(Duration::from_millis(250)));
/// ```
pub fn before_breaker() -> BreakerBuilder {
    redis(Duration::from_millis(250), Duration::from_secs(2))
}

/// The tuned one: `half_open_resource_timeout` 50 ms, error_timeout 30 s.
///
/// ```
/// use std::time::Duration;
/// let c = fusebox_sim::replay::semian::after_breaker().config().unwrap();
/// assert_eq!(c.half_open_timeout(), Some(Duration::from_millis(50)));
/// assert_eq!(c.open_for(), Duration::from_secs(30));
/// ```
pub fn after_breaker() -> BreakerBuilder {
    redis(Duration::from_millis(50), Duration::from_secs(30))
}

fn redis(probe: Duration, open_for: Duration) -> BreakerBuilder {
    // error_threshold 3: three failures in a row open it; success_threshold 1.
    Breaker::builder("redis")
        .window_calls(3)
        .failure_rate(100)
        .timeout(Duration::from_millis(250))
        .half_open_timeout(probe)
        .open_for(open_for)
        .half_open_calls(1)
}

const DOWN_AT: Duration = Duration::from_secs(10);

/// Runs one configuration with `workers` threads; returns the report and the steady window.
fn run(setup: &SemianSetup, b: &BreakerBuilder, workers: usize) -> io::Result<Report> {
    let cfg = b.config().map_err(io::Error::other)?;
    let cycle = cfg.open_for() + cfg.half_open_timeout().unwrap_or_default();
    // All circuits trip within the first minute even on 2 threads; measure after that.
    let from = DOWN_AT + Duration::from_secs(60);
    let to = from + cycle * setup.cycles.max(1);
    let n = setup.instances.max(1);
    let gap = 1.0 / setup.rate_per_instance.max(0.01);
    let mut server = Server::new(workers)
        .window("tripping", DOWN_AT, from)
        .window("steady state", from, to)
        .sample_every(Duration::from_secs(1));
    for i in 0..n {
        let dep = Dependency::builder(
            format!("redis-{i}"),
            Latency::fixed(Duration::from_millis(1)),
        )
        .phase(DOWN_AT, Phase::Hang)
        .build();
        // One breaker per instance: what `#[breaker(name = "redis", key = i)]` gives.
        let breaker = Breaker::detached(cfg.with_key(&i.to_string()));
        let offset = Duration::from_secs_f64(gap * i as f64 / n as f64);
        server = server.route(
            Route::new(format!("redis/{i}"), setup.rate_per_instance)
                .offset(offset)
                .call(Call::new(&dep).breaker(&breaker)),
        );
    }
    server.run_for(to)
}

/// Runs one configuration: on the worker's threads, and (only when the prediction exceeds
/// them) on unbounded threads to measure the demand.
///
/// ```
/// use fusebox_sim::replay::semian::{after_breaker, run_one, SemianSetup};
/// let mut setup = SemianSetup::default();
/// setup.instances = 6;
/// setup.cycles = 2;
/// let run = run_one(&setup, &after_breaker()).unwrap();
/// // 6 × 50 ms per 30 s on 2 threads: half a percent.
/// assert!((run.measured - run.predicted).abs() < 0.001, "{} vs {}", run.measured, run.predicted);
/// ```
pub fn run_one(setup: &SemianSetup, b: &BreakerBuilder) -> io::Result<SemianRun> {
    let cfg = b.config().map_err(io::Error::other)?;
    let threads = setup.threads.max(1);
    let predicted = tune::extra_utilization(
        setup.instances,
        cfg.half_open_timeout().unwrap_or_default(),
        cfg.open_for(),
        threads,
    );
    let report = run(setup, b, threads)?;
    let steady = report.window("steady state");
    let measured = steady.map_or(0.0, |w| w.utilization);
    let shed = steady.map_or(0.0, |w| w.counts.shed_share());
    let demand = if predicted < 0.5 {
        measured
    } else {
        let unbounded = run(setup, b, 100_000)?;
        unbounded.window("steady state").map_or(0.0, |w| {
            w.utilization * unbounded.workers as f64 / threads as f64
        })
    };
    Ok(SemianRun {
        predicted,
        measured,
        demand,
        shed,
        report,
    })
}

/// Runs both configurations.
///
/// ```no_run
/// use fusebox_sim::replay::semian::{semian, SemianSetup};
/// let s = semian(&SemianSetup::default()).unwrap();
/// println!("tuned: predicted {:.1} %, measured {:.1} %", s.after.predicted * 100.0, s.after.measured * 100.0);
/// ```
pub fn semian(setup: &SemianSetup) -> io::Result<Semian> {
    Ok(Semian {
        before: run_one(setup, &before_breaker())?,
        after: run_one(setup, &after_breaker())?,
    })
}
