//! Replay 3, `seeds/slow-not-down.txt`: a payment service at 8 s instead of 80 ms with zero
//! errors. A breaker that only counts errors never opens and the shared pool fills; `trip_p95`
//! opens it and the typed fallback ("we'll confirm by email") keeps checkout answering.

use std::io;
use std::time::Duration;

use crate::{Call, Dependency, Latency, Phase, Report, Route, Server};
use fusebox_runtime::{Breaker, BreakerBuilder};

/// Parameters of the slow-not-down replay.
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::replay::slow::SlowSetup;
/// assert_eq!(SlowSetup::default().slow_for, Duration::from_secs(600));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SlowSetup {
    /// Multiplies the pool and every rate (shares stay the same).
    pub scale: f64,
    /// How long the payment service stays slow.
    pub slow_for: Duration,
}

impl Default for SlowSetup {
    fn default() -> Self {
        SlowSetup {
            scale: 1.0,
            slow_for: Duration::from_secs(600),
        }
    }
}

/// What the slow-not-down replay measured for one configuration: see [`run_one`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SlowRun {
    /// The run.
    pub report: Report,
    /// From the slowdown until the breaker opened (`None`: it never opened).
    pub trip_after: Option<Duration>,
    /// Mean busy share of the shared pool while the service was slow.
    pub utilization: f64,
    /// Share of checkout requests answered, normally or by the fallback, within 2 s while
    /// the service was slow.
    pub checkout_answered: f64,
    /// Share of the unrelated requests (orders, cart) shed for want of a worker.
    pub others_shed: f64,
}

/// Both configurations: see [`slow()`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Slow {
    /// A breaker that only counts errors and timeouts.
    pub error_only: SlowRun,
    /// The same breaker with `trip_p95 = 500ms`.
    pub p95: SlowRun,
}

const SLOW_AT: Duration = Duration::from_secs(60);

/// The breaker that counts errors only: half the calls failing in 30 s, 30 s timeout.
///
/// ```
/// let c = fusebox_sim::replay::slow::error_only_breaker().config().unwrap();
/// assert!(c.slow().is_none());
/// ```
pub fn error_only_breaker() -> BreakerBuilder {
    Breaker::builder("payments")
        .failure_rate(50)
        .timeout(Duration::from_secs(30))
        .half_open_timeout(Duration::from_secs(1))
}

/// The write-up's fix: also trip when p95 latency exceeds 500 ms; trials must answer in 1 s.
///
/// ```
/// let c = fusebox_sim::replay::slow::p95_breaker().config().unwrap();
/// assert_eq!(c.slow().unwrap().rate, 5); // p95 > 500 ms ⇔ more than 5 % slower
/// ```
pub fn p95_breaker() -> BreakerBuilder {
    error_only_breaker().trip_p95(Duration::from_millis(500))
}

/// Runs one configuration: checkout calls payments; orders and cart share the same pool.
///
/// ```
/// use std::time::Duration;
/// use fusebox_sim::replay::slow::{p95_breaker, run_one, SlowSetup};
/// let mut setup = SlowSetup::default();
/// setup.scale = 0.2; // a pool of 20, a fifth of the traffic: the same shares
/// setup.slow_for = Duration::from_secs(120);
/// let run = run_one(&setup, &p95_breaker()).unwrap();
/// assert!(run.trip_after.unwrap() < Duration::from_secs(5));
/// assert!(run.checkout_answered > 0.95); // only the calls before the trip spin
/// ```
pub fn run_one(setup: &SlowSetup, breaker: &BreakerBuilder) -> io::Result<SlowRun> {
    let k = setup.scale.max(0.01);
    let ms = Duration::from_millis;
    let back_at = SLOW_AT + setup.slow_for;
    let end = back_at + Duration::from_secs(120);
    // 8 s instead of 80 ms, and one call in twenty takes 40 s: our 30 s timeout cuts it off.
    let slow = Latency::fixed(Duration::from_secs(8)).with_tail(0.05, Duration::from_secs(40));
    let payments = Dependency::builder("payments", Latency::uniform(ms(60), ms(100)))
        .phase(SLOW_AT, Phase::Slow(slow))
        .phase(back_at, Phase::Healthy)
        .build();
    let b = breaker.build_detached().map_err(io::Error::other)?;
    let report = Server::new((100.0 * k).round() as usize)
        .route(
            Route::new("checkout", 20.0 * k)
                .call(Call::new(&payments).breaker(&b))
                .patience(Duration::from_secs(2)),
        )
        .route(Route::new("orders", 40.0 * k).work(ms(20)))
        .route(Route::new("cart", 40.0 * k).work(ms(20)))
        .window("normal", Duration::ZERO, SLOW_AT)
        .window("slow", SLOW_AT, back_at)
        .window("healthy again", back_at, end)
        .run_for(end)?;
    let w = report.window("slow");
    let checkout_answered = w
        .and_then(|w| w.route("checkout"))
        .map_or(0.0, |c| c.counts.answered_in_time_share());
    let others_shed = w.map_or(0.0, |w| w.counts_without("checkout").shed_share());
    Ok(SlowRun {
        trip_after: report
            .breaker("payments")
            .and_then(|t| t.first_open_after(SLOW_AT))
            .filter(|at| *at < back_at)
            .map(|at| at - SLOW_AT),
        utilization: w.map_or(0.0, |w| w.utilization),
        checkout_answered,
        others_shed,
        report,
    })
}

/// Runs both configurations.
///
/// ```no_run
/// use fusebox_sim::replay::slow::{slow, SlowSetup};
/// let s = slow(&SlowSetup::default()).unwrap();
/// assert_eq!(s.error_only.trip_after, None);
/// ```
pub fn slow(setup: &SlowSetup) -> io::Result<Slow> {
    Ok(Slow {
        error_only: run_one(setup, &error_only_breaker())?,
        p95: run_one(setup, &p95_breaker())?,
    })
}
