//! The server model on its own: utilization is exact, a full server sheds, calls go through
//! the real breaker and bulkhead.

use std::time::Duration;

use fusebox_runtime::{Breaker, Bulkhead, State};
use fusebox_sim::{Call, Dependency, Latency, Phase, Route, Server};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn s(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn utilization_follows_littles_law() {
    let dep = Dependency::builder("d", Latency::fixed(ms(40))).build();
    let r = Server::new(10)
        .route(Route::new("a", 100.0).work(ms(10)).call(Call::new(&dep)))
        .window("all", s(1), s(60))
        .run_for(s(60))
        .unwrap();
    // 100/s × (10 + 40) ms = 5 of 10 workers (timers tick at 1 ms: allow a little).
    let w = r.window("all").unwrap();
    assert!((w.utilization - 0.5).abs() < 0.015, "{}", w.utilization);
    assert_eq!(w.counts.shed, 0);
    assert_eq!(r.route("a").unwrap().counts.sent, dep.stats().received);
    assert_eq!(r.counts().arrived, 6000);
}

#[test]
fn a_full_server_sheds_requests_at_the_door() {
    let r = Server::new(50)
        .route(Route::new("slow", 100.0).work(s(1)))
        .window("all", Duration::ZERO, s(30))
        .run_for(s(30))
        .unwrap();
    let w = r.window("all").unwrap();
    let full = w.full_after.expect("50 workers fill at 100/s × 1 s");
    assert!((full.as_secs_f64() - 0.5).abs() < 0.02, "{full:?}");
    assert!(w.utilization > 0.95, "{}", w.utilization);
    assert!((w.counts.shed_share() - 0.5).abs() < 0.03, "{:?}", w.counts);
    assert_eq!(w.peak_busy, 50);
}

#[test]
fn an_open_breaker_stops_calls_and_the_fallback_answers() {
    let dep = Dependency::builder("d", Latency::fixed(ms(10)))
        .phase(s(10), Phase::Hang)
        .build();
    let b = Breaker::builder("d")
        .window_calls(10)
        .timeout(ms(200))
        .open_for(s(60))
        .build_detached()
        .unwrap();
    let r = Server::new(100)
        .route(Route::new("r", 50.0).call(Call::new(&dep).breaker(&b).fallback_cost(ms(2))))
        .window("open", s(12), s(60))
        .run_for(s(60))
        .unwrap();
    let w = r.window("open").unwrap();
    assert_eq!(
        w.counts.sent, 0,
        "nothing reaches the dependency while open"
    );
    assert_eq!(w.counts.rejected, w.counts.arrived);
    // Each rejected request holds its worker for the 2 ms fallback: 50/s × 2 ms = 0.1 worker.
    assert!(
        (w.utilization * 100.0 - 0.1).abs() < 0.02,
        "{}",
        w.utilization
    );
    let t = r.breaker("d").unwrap();
    assert_eq!(t.state_at(s(30)), State::Open);
    assert!(t.first_open_after(s(10)).unwrap() < s(11));
    // The breaker the run drove is the real one: its own metrics agree.
    assert_eq!(b.metrics().times_opened, 1);
}

#[test]
fn a_bulkhead_caps_the_workers_one_dependency_holds() {
    let dep = Dependency::builder("d", Latency::fixed(s(5))).build();
    let pool = Bulkhead::builder("d").pool(20).build_detached().unwrap();
    let r = Server::new(100)
        .route(Route::new("slow", 10.0).call(Call::new(&dep).bulkhead(&pool)))
        .route(Route::new("fast", 100.0).work(ms(10)))
        .window("steady", s(10), s(60))
        .run_for(s(60))
        .unwrap();
    let w = r.window("steady").unwrap();
    let slow = w.route("slow").unwrap();
    assert!((slow.mean_busy - 20.0).abs() < 0.5, "{}", slow.mean_busy);
    // 20 slots / 5 s: 4 calls a second start, the other 6 are refused at once.
    let len = (w.to - w.from).as_secs_f64();
    assert!((slow.counts.sent as f64 / len - 4.0).abs() < 0.2);
    assert!((slow.counts.rejected as f64 / len - 6.0).abs() < 0.2);
    assert_eq!(w.route("fast").unwrap().counts.shed, 0);
}

#[test]
fn a_run_stops_once_the_breakers_settled() {
    let dep = Dependency::builder("d", Latency::fixed(ms(10)))
        .phase(s(10), Phase::Refuse)
        .phase(s(20), Phase::Healthy)
        .build();
    let b = Breaker::builder("d")
        .window_calls(10)
        .open_for(s(5))
        .half_open_window(s(5))
        .build_detached()
        .unwrap();
    let r = Server::new(10)
        .route(Route::new("r", 20.0).call(Call::new(&dep).breaker(&b)))
        .stop_when_settled(s(20), s(60))
        .run_for(s(3600))
        .unwrap();
    assert!(r.duration < s(120), "stopped at {:?}", r.duration);
    let rec = r.breaker("d").unwrap().recovery_after(s(20)).unwrap();
    // At worst one half-open window still failing, one open period, one window of trials.
    assert!(rec <= s(15), "{rec:?}");
    // Time series cover the run.
    assert_eq!(r.series.utilization.len() as u64, r.duration.as_secs());
}

#[tokio::test]
async fn run_for_inside_a_runtime_is_an_error_not_a_panic() {
    let r = Server::new(1).route(Route::new("a", 1.0)).run_for(s(1));
    assert!(r.is_err());
}

/// What `#[breaker]` generates for `async fn lookup(dep: Dependency) -> Result<(), SimError>`
/// without a fallback: the call through the breaker, a rejection via `From<Rejection>`.
fn annotated_like(b: &Breaker) -> Call {
    use fusebox_runtime::Error;
    use fusebox_sim::SimError;
    let through = b.clone();
    let dep = cold_dependency();
    Call::function(&dep, move |dep| {
        let b = through.clone();
        async move {
            b.call(async move { dep.call().await })
                .await
                .map_err(|e| match e {
                    Error::Rejected(r) => SimError::from(r),
                    Error::Failed(e) => e,
                })
        }
    })
    .watch(b)
}

fn cold_dependency() -> Dependency {
    Dependency::builder("cold", Latency::uniform(ms(70), ms(110)))
        .phase(s(30), Phase::Refuse)
        .phase(
            s(90),
            Phase::ColdStart {
                cold: Latency::uniform(ms(1500), s(3)),
                warm_after: 12,
            },
        )
        .seed(3)
        .build()
}

#[test]
fn a_user_function_call_reports_the_same_as_a_builder_call() {
    let cfg = || {
        Breaker::builder("cold")
            .window_calls(20)
            .timeout(ms(800))
            .half_open_timeout(s(4))
            .open_for(s(30))
            .build_detached()
            .unwrap()
    };
    let run = |call: Call| {
        Server::new(20)
            .route(Route::new("checkout", 10.0).call(call))
            .run_for(s(400))
            .unwrap()
    };
    let b = cfg();
    let builder = run(Call::new(&cold_dependency()).breaker(&b));
    let f = cfg();
    let function = run(annotated_like(&f));
    assert_eq!(builder.counts(), function.counts());
    assert_eq!(builder.breakers, function.breakers);
    assert!(function.breakers[0].recovery_after(s(90)).is_some());
    assert!(function.counts().sent > 0 && function.counts().rejected > 0);
}
