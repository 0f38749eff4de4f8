//! Issue 31: a call's outcome is a success, a failure or ignored (neither). The resilience4j
//! scenarios that failed before: excluded errors, ignored errors in the closed window and in
//! half-open, and an `Ok` that is a failure.

use std::time::Duration;

use fusebox_runtime::{Breaker, Completion, Outcome, State};
use tokio::time::advance;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dep {
    /// The dependency failed.
    Down,
    /// The dependency answered "not found": a sign of health.
    NotFound,
    /// Refused before the dependency was reached: no sign of anything.
    Invalid,
}

/// `ignore` first, then `failure` (NotFound excluded: a success).
fn classify(r: &Result<u16, Dep>) -> Outcome {
    Outcome::of(
        r,
        |e| *e == Dep::Invalid,
        |e| *e == Dep::Down,
        |s| *s >= 500,
    )
}

async fn call(b: &Breaker, r: Result<u16, Dep>) -> Completion<u16, Dep> {
    b.call_classified(async move { r }, classify).await
}

fn window(n: u32) -> Breaker {
    Breaker::builder(format!("outcomes-{n}-{}", rand_suffix()))
        .window_calls(n)
        .min_calls(n)
        .failure_rate(50)
        .open_for(Duration::from_secs(1))
        .build_detached()
        .unwrap()
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

#[tokio::test(start_paused = true)]
async fn ignored_errors_take_no_place_in_the_closed_window() {
    let b = window(2);
    call(&b, Err(Dep::Down)).await;
    for _ in 0..5 {
        assert!(matches!(
            call(&b, Err(Dep::Invalid)).await,
            Completion::Ignored(Dep::Invalid)
        ));
    }
    let m = b.metrics();
    // One failure in a window of 2: `min_calls` not reached, and the rate reads 100 %.
    assert_eq!(
        (m.state, m.window_calls, m.failure_rate),
        (State::Closed, 1, 100.0)
    );
    assert_eq!((m.ignored, m.failed), (5, 1));
    // The next failure fills the window at 100 %: it opens.
    call(&b, Err(Dep::Down)).await;
    assert_eq!(b.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn excluded_errors_count_as_successes_in_the_closed_window() {
    let b = window(2);
    call(&b, Err(Dep::Down)).await;
    assert!(matches!(
        call(&b, Err(Dep::NotFound)).await,
        Completion::Ignored(Dep::NotFound)
    ));
    let m = b.metrics();
    // As today (and r4j's `recordException` false): a call that did not fail, 50 %.
    assert_eq!((m.window_calls, m.failure_rate), (2, 50.0));
    // A success in the lifetime counters too; `ignored` is the ignored outcome's own.
    assert_eq!((m.succeeded, m.ignored), (1, 0));
}

#[tokio::test(start_paused = true)]
async fn ok_classified_as_failure_trips_and_is_returned_as_is() {
    let b = window(4);
    for _ in 0..4 {
        assert!(matches!(call(&b, Ok(503)).await, Completion::Ok(503)));
    }
    let m = b.metrics();
    assert_eq!((m.state, m.failed, m.succeeded), (State::Open, 4, 0));
}

async fn half_open(calls: u32) -> Breaker {
    let b = Breaker::builder(format!("outcomes-ho-{}", rand_suffix()))
        .window_calls(2)
        .min_calls(2)
        .open_for(Duration::from_secs(1))
        .half_open_calls(calls)
        .build_detached()
        .unwrap();
    call(&b, Err(Dep::Down)).await;
    call(&b, Err(Dep::Down)).await;
    assert_eq!(b.state(), State::Open);
    advance(Duration::from_secs(1)).await;
    b
}

#[tokio::test(start_paused = true)]
async fn four_ignored_trials_leave_half_open_and_give_their_slots_back() {
    let b = half_open(4).await;
    for _ in 0..4 {
        assert!(matches!(
            call(&b, Err(Dep::Invalid)).await,
            Completion::Ignored(_)
        ));
    }
    assert_eq!(b.state(), State::HalfOpen);
    // Their slots were given back: four passed trials close it.
    for _ in 0..4 {
        assert!(matches!(call(&b, Ok(200)).await, Completion::Ok(200)));
    }
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn three_passed_trials_and_an_ignored_one_stay_half_open() {
    let b = half_open(4).await;
    for _ in 0..3 {
        call(&b, Ok(200)).await;
    }
    call(&b, Err(Dep::Invalid)).await;
    assert_eq!(b.state(), State::HalfOpen);
    call(&b, Ok(200)).await;
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn excluded_errors_pass_as_trials_as_today() {
    let b = half_open(4).await;
    for _ in 0..4 {
        call(&b, Err(Dep::NotFound)).await;
    }
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn ignored_calls_in_a_sampled_half_open_are_not_judged() {
    let b = Breaker::builder("outcomes-share")
        .window_calls(2)
        .min_calls(2)
        .open_for(Duration::from_secs(1))
        .half_open_pct(100)
        .half_open_window(Duration::from_secs(2))
        .build_detached()
        .unwrap();
    call(&b, Err(Dep::Down)).await;
    call(&b, Err(Dep::Down)).await;
    advance(Duration::from_secs(1)).await;
    for _ in 0..10 {
        call(&b, Err(Dep::Invalid)).await;
    }
    advance(Duration::from_secs(2)).await;
    // Only ignored calls in the window: nothing to judge, it keeps sampling.
    call(&b, Err(Dep::Invalid)).await;
    assert_eq!(b.state(), State::HalfOpen);
    // One failure among the ignored ones: 100 % of the judged trials, it reopens.
    call(&b, Err(Dep::Down)).await;
    assert_eq!(b.state(), State::Open);
    assert_eq!(b.metrics().ignored, 11);
}

#[tokio::test(start_paused = true)]
async fn tower_layer_and_builder_classify_alike() {
    use fusebox_runtime::tower::{BreakerLayer, Classified};
    use tower::{service_fn, Layer, Service, ServiceExt};

    let mut svc = BreakerLayer::new(
        Breaker::builder("outcomes-tower")
            .window_calls(2)
            .min_calls(2),
    )
    .unwrap()
    .failure(Classified(classify))
    .layer(service_fn(|r: Result<u16, Dep>| async move { r }));
    let b = fusebox_runtime::registry()
        .breaker("outcomes-tower")
        .unwrap();
    svc.ready()
        .await
        .unwrap()
        .call(Err(Dep::Down))
        .await
        .unwrap_err();
    for _ in 0..3 {
        svc.ready()
            .await
            .unwrap()
            .call(Err(Dep::Invalid))
            .await
            .unwrap_err();
    }
    let m = b.metrics();
    assert_eq!((m.state, m.window_calls, m.ignored), (State::Closed, 1, 3));
    assert_eq!(svc.ready().await.unwrap().call(Ok(503)).await.unwrap(), 503);
    assert_eq!(b.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn a_half_open_short_of_its_trials_reopens_at_the_bound() {
    let b = half_open(3).await;
    call(&b, Ok(200)).await;
    call(&b, Ok(200)).await;
    advance(Duration::from_secs(29)).await;
    assert_eq!(b.state(), State::HalfOpen);
    advance(Duration::from_secs(1)).await;
    // 30 s (the default half-open window) without a third trial: the next caller finds it
    // reopened, not a trial that would have closed it.
    assert!(matches!(call(&b, Ok(200)).await, Completion::Failed(_)));
    assert_eq!(b.state(), State::Open);
    // The next episode closes on three passed trials as usual.
    advance(Duration::from_secs(1)).await;
    for _ in 0..3 {
        call(&b, Ok(200)).await;
    }
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn forced_closed_records_unless_told_not_to() {
    let b = window(4);
    b.force_close();
    for _ in 0..3 {
        call(&b, Err(Dep::Down)).await;
    }
    let m = b.metrics();
    // Recorded (resilience4j's METRICS_ONLY): the window shows the failures, nothing trips.
    assert_eq!(
        (m.state, m.recording, m.window_calls),
        (State::ForcedClosed, true, 3)
    );

    b.force_close_unrecorded();
    let before = b.metrics().window_calls;
    for _ in 0..5 {
        call(&b, Err(Dep::Down)).await;
        call(&b, Ok(200)).await;
    }
    let m = b.metrics();
    // Record nothing (its DISABLED): counted in the lifetime counters only.
    assert_eq!((m.state, m.recording), (State::ForcedClosed, false));
    assert_eq!(m.window_calls, before);
    assert_eq!((m.failed, m.succeeded), (8, 5));

    // Released, it records and judges again.
    b.reset();
    assert!(b.metrics().recording);
    for _ in 0..4 {
        call(&b, Err(Dep::Down)).await;
    }
    assert_eq!(b.state(), State::Open);
}

#[tokio::test(start_paused = true)]
async fn a_slow_call_that_ends_ignored_leaves_no_slow_sample_behind() {
    // Marked slow in flight (past 100 ms) before its outcome is known, a call that ends
    // ignored takes its sample back out: two such calls and four quick successes judge
    // 0 % slow over four calls, not 50 % over six. Both window kinds.
    for kind in ["calls", "time"] {
        let b = Breaker::builder(format!("outcomes-slow-ignored-{kind}-{}", rand_suffix()))
            .trip_p95(Duration::from_millis(100))
            .min_calls(4);
        let b = match kind {
            "calls" => b.window_calls(4),
            _ => b.window(Duration::from_secs(30)),
        }
        .build_detached()
        .unwrap();
        let slow: Vec<_> = (0..2)
            .map(|_| {
                let b = b.clone();
                tokio::spawn(async move {
                    b.call_classified(
                        async {
                            tokio::time::sleep(Duration::from_millis(200)).await;
                            Err::<u16, _>(Dep::Invalid)
                        },
                        classify,
                    )
                    .await
                })
            })
            .collect();
        advance(Duration::from_millis(250)).await;
        for h in slow {
            assert!(matches!(
                h.await.unwrap(),
                Completion::Ignored(Dep::Invalid)
            ));
        }
        for _ in 0..4 {
            assert!(matches!(call(&b, Ok(200)).await, Completion::Ok(200)));
        }
        assert_eq!(b.state(), State::Closed, "{kind} window");
        let m = b.metrics();
        assert_eq!(
            (m.ignored, m.slow),
            (2, 2),
            "{kind}: counted, and slow, in their own counters"
        );
    }
}
