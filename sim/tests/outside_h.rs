//! Issue 5's simulator through its public API at the edges a user reaches: a latency of
//! `Duration::MAX` ("never answers") is a distribution like any other, never a panic.

use std::time::Duration;

use fusebox_runtime::{Breaker, State};
use fusebox_sim::{Call, Dependency, Latency, Phase, Route, Server};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn s(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn the_mean_of_an_endless_latency_is_the_longest_duration() {
    assert_eq!(Latency::fixed(Duration::MAX).mean(), Duration::MAX);
    assert_eq!(
        Latency::fixed(ms(10)).with_tail(1.0, Duration::MAX).mean(),
        Duration::MAX
    );
    let half = Latency::uniform(Duration::ZERO, Duration::MAX).mean();
    assert!((half.as_secs_f64() / (Duration::MAX.as_secs_f64() / 2.0) - 1.0).abs() < 1e-9);
    // Ordinary figures are unchanged: the midpoint, and the tail weighed by its share.
    assert_eq!(Latency::uniform(ms(10), ms(30)).mean(), ms(20));
    assert_eq!(Latency::fixed(ms(10)).with_tail(0.5, ms(30)).mean(), ms(20));
}

#[test]
fn a_dependency_slow_forever_is_cut_by_the_timeout_and_opens_the_breaker() {
    let dep = Dependency::builder("forever", Latency::fixed(ms(10)))
        .phase(s(5), Phase::Slow(Latency::fixed(Duration::MAX)))
        .build();
    let b = Breaker::builder("forever")
        .window_calls(10)
        .timeout(ms(200))
        .open_for(s(60))
        .build_detached()
        .unwrap();
    let r = Server::new(50)
        .route(Route::new("r", 20.0).call(Call::new(&dep).breaker(&b)))
        .window("slow", s(6), s(20))
        .run_for(s(20))
        .unwrap();
    assert_eq!(b.state(), State::Open);
    let w = r.window("slow").unwrap();
    // Open for the whole window: every request is answered by the fallback, none waits.
    assert!(w.counts.fallback_share() > 0.99, "{:?}", w.counts);
}
