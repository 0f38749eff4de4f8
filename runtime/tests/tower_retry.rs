//! `RetryLayer` outside a `BreakerLayer`: each attempt is a call of the breaker, a refusal is
//! never retried, and the layer draws on the same budget as every retry of its name.
#![cfg(feature = "tower")]

use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::Arc;

use fusebox_runtime::retry::{BudgetConfig, Retry};
use fusebox_runtime::tower::{BreakerLayer, RetryLayer};
use fusebox_runtime::{registry, Breaker, Error, Rejection, State};
use tower::{service_fn, Layer, ServiceBuilder, ServiceExt};

fn counting(
    calls: &Arc<AtomicU32>,
) -> impl tower::Service<u32, Response = u32, Error = &'static str, Future = impl Send> + Clone {
    let calls = calls.clone();
    service_fn(move |x: u32| {
        calls.fetch_add(1, SeqCst);
        async move {
            if x == 0 {
                Err("down")
            } else {
                Ok(x)
            }
        }
    })
}

#[tokio::test(start_paused = true)]
async fn each_attempt_is_a_call_of_the_breaker_and_an_open_breaker_stops_the_retries() {
    let calls = Arc::new(AtomicU32::new(0));
    let svc = ServiceBuilder::new()
        .layer(RetryLayer::new(
            Retry::builder("tower-retry-open")
                .attempts(5)
                .build()
                .unwrap(),
        ))
        .layer(BreakerLayer::new(Breaker::builder("tower-retry-open").window_calls(2)).unwrap())
        .service(counting(&calls));
    // Two failed attempts fill the window of two at 100 %: the breaker opens, and the third
    // attempt is refused, which ends the retries at once.
    let r = svc.clone().oneshot(0).await;
    assert!(
        matches!(r, Err(Error::Rejected(Rejection::Open { .. }))),
        "{r:?}"
    );
    assert_eq!(calls.load(SeqCst), 2);
    let b = registry().breaker("tower-retry-open").unwrap();
    assert_eq!(b.state(), State::Open);
    assert_eq!(b.metrics().failed, 2, "each attempt judged as a call");
}

#[tokio::test(start_paused = true)]
async fn the_layer_draws_on_the_names_budget() {
    let budget = BudgetConfig {
        share_pct: 0,
        floor_per_s: 1,
        window: std::time::Duration::from_secs(3),
    };
    let retry = Retry::builder("tower-retry-budget")
        .attempts(3)
        .budget(budget)
        .build()
        .unwrap();
    let calls = Arc::new(AtomicU32::new(0));
    let svc = ServiceBuilder::new()
        .layer(RetryLayer::new(retry.clone()))
        .layer(
            BreakerLayer::new(
                Breaker::builder("tower-retry-budget")
                    .failure_rate(100)
                    .min_calls(100),
            )
            .unwrap(),
        )
        .service(counting(&calls));
    for _ in 0..5 {
        let _ = svc.clone().oneshot(0).await;
    }
    // The floor allows 3 retries in the window: the first call retries twice, the second
    // once and is then refused, and the last three are refused their first retry.
    assert_eq!(calls.load(SeqCst), 8);
    assert_eq!(retry.budget().retries(), 3);
    assert_eq!(retry.budget().exhausted(), 4);
}

fn throttled(e: &u16) -> bool {
    *e == 429
}

fn pushback(e: &u16) -> Option<std::time::Duration> {
    (*e == 429).then(|| std::time::Duration::from_secs(2))
}

/// With hints, the layer retries what `retry_on` accepts, waits what `retry_after` says, and
/// holds its name's breaker open meanwhile, as `#[retry]` does.
#[tokio::test(start_paused = true)]
async fn hints_are_honoured_and_hold_the_breaker_open() {
    let calls = Arc::new(AtomicU32::new(0));
    let seen = calls.clone();
    let svc = ServiceBuilder::new()
        .layer(
            RetryLayer::new(Retry::builder("tower-retry-hints").build().unwrap())
                .hints(throttled, pushback),
        )
        .layer(BreakerLayer::new(Breaker::builder("tower-retry-hints").half_open_calls(1)).unwrap())
        .service(service_fn(move |x: u32| {
            let n = seen.fetch_add(1, SeqCst);
            async move {
                match (x, n) {
                    (0, _) => Err(400u16),
                    (_, 0) => Err(429u16),
                    _ => Ok(x),
                }
            }
        }));
    let started = tokio::time::Instant::now();
    assert_eq!(svc.clone().oneshot(5).await, Ok(5));
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(2),
        "waited the hint"
    );
    assert_eq!(calls.load(SeqCst), 2);
    let m = fusebox_runtime::metrics();
    assert_eq!(m.retry("tower-retry-hints").unwrap().held_open, 1);
    // The hold lapsed into half-open, and the retry's attempt was the trial that closed it.
    assert_eq!(
        registry().breaker("tower-retry-hints").unwrap().state(),
        State::Closed
    );
    // `retry_on` refuses a 400: one attempt only.
    assert_eq!(svc.oneshot(0).await, Err(Error::Failed(400)));
    assert_eq!(calls.load(SeqCst), 3);
}

/// An error the breaker's classifier calls a success (a 404) or ignores (a malformed request)
/// is the caller's answer: the layer does not retry it, nor read a hint from it, as
/// `#[retry]` does not; a counted failure is retried.
#[tokio::test(start_paused = true)]
async fn errors_the_breaker_does_not_count_are_not_retried() {
    use fusebox_runtime::tower::Classified;
    use fusebox_runtime::Outcome;
    fn classify(r: &Result<u32, u16>) -> Outcome {
        match r {
            Ok(_) | Err(404) => Outcome::Success,
            Err(400) => Outcome::Ignored,
            Err(_) => Outcome::Failure,
        }
    }
    fn any(_: &u16) -> bool {
        true
    }
    fn hint(_: &u16) -> Option<std::time::Duration> {
        Some(std::time::Duration::from_secs(1))
    }
    let calls = Arc::new(AtomicU32::new(0));
    let seen = calls.clone();
    let svc = ServiceBuilder::new()
        .layer(
            RetryLayer::new(
                Retry::builder("tower-retry-counted")
                    .attempts(3)
                    .build()
                    .unwrap(),
            )
            .hints(any, hint),
        )
        .layer(
            BreakerLayer::new(Breaker::builder("tower-retry-counted").min_calls(100))
                .unwrap()
                .failure(Classified(classify as fn(&Result<u32, u16>) -> Outcome)),
        )
        .service(service_fn(move |code: u16| {
            seen.fetch_add(1, SeqCst);
            async move { Err::<u32, u16>(code) }
        }));
    for (code, attempts) in [(404, 1), (400, 1), (503, 3)] {
        calls.store(0, SeqCst);
        assert_eq!(svc.clone().oneshot(code).await, Err(Error::Failed(code)));
        assert_eq!(calls.load(SeqCst), attempts, "{code}");
        let b = registry().breaker("tower-retry-counted").unwrap();
        if code != 503 {
            assert_eq!(
                b.state(),
                State::Closed,
                "no hint read from an uncounted {code}"
            );
        }
    }
}

/// The verdict is the outer breaker's: a service that calls another breaker inside (an
/// uncounted 404 there) and fails its own call (counted here) is retried.
#[tokio::test(start_paused = true)]
async fn the_breaker_the_retry_wraps_has_the_last_word() {
    use fusebox_runtime::tower::Classified;
    use fusebox_runtime::Outcome;
    fn classify(r: &Result<u32, u16>) -> Outcome {
        match r {
            Ok(_) | Err(404) => Outcome::Success,
            Err(_) => Outcome::Failure,
        }
    }
    let inner = BreakerLayer::new(Breaker::builder("tower-retry-inner").min_calls(100))
        .unwrap()
        .failure(Classified(classify as fn(&Result<u32, u16>) -> Outcome))
        .layer(service_fn(|_: u32| async { Err::<u32, u16>(404) }));
    let calls = Arc::new(AtomicU32::new(0));
    let seen = calls.clone();
    let svc = ServiceBuilder::new()
        .layer(RetryLayer::new(
            Retry::builder("tower-retry-outer")
                .attempts(3)
                .build()
                .unwrap(),
        ))
        .layer(BreakerLayer::new(Breaker::builder("tower-retry-outer").min_calls(100)).unwrap())
        .service(service_fn(move |x: u32| {
            seen.fetch_add(1, SeqCst);
            let inner = inner.clone();
            async move {
                // The lookup's 404 is no failure there; here it fails the request (a 502).
                inner.oneshot(x).await.map_err(|_| 502u16)
            }
        }));
    assert_eq!(svc.oneshot(1).await, Err(Error::Failed(502)));
    assert_eq!(
        calls.load(SeqCst),
        3,
        "a counted failure of the outer breaker: retried"
    );
}

/// Behind a keyed `BreakerLayer`, a hint holds the key the attempt went through (one host
/// rate-limits, the others keep answering), as `#[retry]` holds a keyed breaker's key.
#[tokio::test(start_paused = true)]
async fn a_hint_holds_the_key_the_attempt_went_through() {
    fn busy(e: &u16) -> bool {
        *e == 429
    }
    fn after(e: &u16) -> Option<std::time::Duration> {
        (*e == 429).then(|| std::time::Duration::from_secs(5))
    }
    fn host(req: &(&'static str, u32)) -> Option<String> {
        Some(req.0.to_owned())
    }
    let calls = Arc::new(AtomicU32::new(0));
    let seen = calls.clone();
    let svc = ServiceBuilder::new()
        .layer(
            RetryLayer::new(
                Retry::builder("tower-retry-keyed")
                    .attempts(1)
                    .build()
                    .unwrap(),
            )
            .hints(busy, after),
        )
        .layer(
            BreakerLayer::keyed(
                Breaker::builder("tower-retry-keyed"),
                host as fn(&(&'static str, u32)) -> Option<String>,
            )
            .unwrap(),
        )
        .service(service_fn(move |(host, x): (&'static str, u32)| {
            seen.fetch_add(1, SeqCst);
            async move {
                if host == "eu" {
                    Err(429u16)
                } else {
                    Ok(x)
                }
            }
        }));
    assert_eq!(
        svc.clone().oneshot(("eu", 1)).await,
        Err(Error::Failed(429))
    );
    let eu = registry().breaker("tower-retry-keyed/eu").unwrap();
    assert_eq!(
        eu.state(),
        State::ForcedOpen,
        "the key that said so is held"
    );
    let r = svc.clone().oneshot(("eu", 1)).await;
    assert!(
        matches!(r, Err(Error::Rejected(Rejection::Open { .. }))),
        "{r:?}"
    );
    assert_eq!(calls.load(SeqCst), 1, "held: the second call never left");
    assert_eq!(svc.oneshot(("us", 7)).await, Ok(7), "other keys answer");
}
