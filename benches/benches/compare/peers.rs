//! The breakers under test, each configured like fusebox's defaults, and the helpers every
//! group drives them with.

use std::future::Future;
use std::time::Duration;

use fusebox_benches::settings::*;
use fusebox_benches::{block_on, dependency, tenth, Boom};
use fusebox_runtime::{Breaker, State};
use tower::{Service, ServiceExt};

pub(crate) fn fusebox_time(name: &str) -> Breaker {
    Breaker::builder(name)
        .failure_rate(FAILURE_RATE)
        .window(WINDOW)
        .min_calls(MIN_CALLS)
        .open_for(OPEN_LONG)
        .build_detached()
        .expect("valid settings")
}

pub(crate) fn fusebox_count(name: &str) -> Breaker {
    Breaker::builder(name)
        .failure_rate(FAILURE_RATE)
        .window_calls(WINDOW_CALLS)
        .min_calls(MIN_CALLS)
        .open_for(OPEN_LONG)
        .build_detached()
        .expect("valid settings")
}

pub(crate) type Failsafe = failsafe::StateMachine<
    failsafe::failure_policy::SuccessRateOverTimeWindow<failsafe::backoff::Constant>,
    (),
>;

pub(crate) fn failsafe_cb(open_for: Duration) -> Failsafe {
    let policy = failsafe::failure_policy::success_rate_over_time_window(
        1.0 - f64::from(FAILURE_RATE) / 100.0,
        MIN_CALLS,
        WINDOW,
        failsafe::backoff::constant(open_for),
    );
    failsafe::Config::new().failure_policy(policy).build()
}

pub(crate) fn recloser_cb(open_for: Duration, half_open_len: usize) -> recloser::AsyncRecloser {
    recloser::AsyncRecloser::from(
        recloser::Recloser::custom()
            .error_rate(f32::from(FAILURE_RATE) / 100.0)
            .closed_len(WINDOW_CALLS as usize)
            .half_open_len(half_open_len)
            .open_wait(open_for)
            .build(),
    )
}

pub(crate) type TowerDep = tower::util::ServiceFn<fn(u64) -> DepFut>;
pub(crate) type DepFut = std::pin::Pin<Box<dyn Future<Output = Result<u64, Boom>> + Send>>;

/// The dependency as a tower service. Boxing is what tower-resilience does to every call
/// anyway, and the bare tower case below pays it too.
pub(crate) fn tower_dep() -> TowerDep {
    fn call(x: u64) -> DepFut {
        Box::pin(dependency(x, x == u64::MAX))
    }
    tower::service_fn(call as fn(u64) -> DepFut)
}

/// A tower service whose calls fail every tenth time (by request value).
pub(crate) fn tower_dep_tenth() -> TowerDep {
    fn call(x: u64) -> DepFut {
        Box::pin(dependency(x, tenth(x)))
    }
    tower::service_fn(call as fn(u64) -> DepFut)
}

pub(crate) type TowerCb = tower_resilience::circuitbreaker::CircuitBreaker<
    TowerDep,
    tower_resilience::circuitbreaker::DefaultClassifier,
>;

pub(crate) fn tower_cb(dep: TowerDep, open_for: Duration, half_open_calls: usize) -> TowerCb {
    use tower_resilience::circuitbreaker::{CircuitBreakerLayer, SlidingWindowType};
    CircuitBreakerLayer::builder()
        .failure_rate_threshold(f64::from(FAILURE_RATE) / 100.0)
        .sliding_window_type(SlidingWindowType::TimeBased)
        .sliding_window_duration(WINDOW)
        .minimum_number_of_calls(MIN_CALLS as usize)
        .wait_duration_in_open(open_for)
        .permitted_calls_in_half_open(half_open_calls)
        .build()
        .expect("valid settings")
        .layer_fn(dep)
}

/// tower-resilience with a count window of the last 20 calls, as `fusebox_count`: its time
/// window scans every call record of the window on each call, so at benchmark rates it
/// measures the window's length more than the breaker.
pub(crate) fn tower_cb_count(dep: TowerDep) -> TowerCb {
    use tower_resilience::circuitbreaker::{CircuitBreakerLayer, SlidingWindowType};
    CircuitBreakerLayer::builder()
        .failure_rate_threshold(f64::from(FAILURE_RATE) / 100.0)
        .sliding_window_type(SlidingWindowType::CountBased)
        .sliding_window_size(WINDOW_CALLS as usize)
        .minimum_number_of_calls(MIN_CALLS as usize)
        .wait_duration_in_open(OPEN_LONG)
        .build()
        .expect("valid settings")
        .layer_fn(dep)
}

/// fusebox's `BreakerLayer` over the same boxed tower dependency, with the settings of
/// `fusebox_time` / `fusebox_count`.
pub(crate) fn fusebox_layer(
    b: Breaker,
    dep: TowerDep,
) -> fusebox_runtime::tower::BreakerService<TowerDep> {
    tower::Layer::layer(&fusebox_runtime::tower::BreakerLayer::from_breaker(b), dep)
}

pub(crate) async fn tower_call<S>(svc: &mut S, x: u64) -> bool
where
    S: Service<u64, Response = u64>,
{
    match svc.ready().await {
        Ok(s) => s.call(x).await.is_ok(),
        Err(_) => false,
    }
}

/// A current-thread runtime for the single-thread groups to enter: trial calls arm a timer,
/// which needs a time driver even though no benchmarked call ever waits on one.
pub(crate) fn context() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime")
}

/// Fails `b` until it opens.
pub(crate) fn trip(b: &Breaker) {
    for i in 0..1_000 {
        let _ = block_on(b.call(dependency(i, true)));
        if b.state() != State::Closed {
            return;
        }
    }
    panic!("{} did not open", b.name());
}
