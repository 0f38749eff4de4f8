//! Issue 30: the tower `RetryLayer` on the same server and budget.

use super::outcomes::statuses;
use super::*;

/// Statuses as errors, for a retry to see: a tower client that maps non-2xx to `Err`.
fn tower_retry_on(e: &HttpError) -> bool {
    matches!(e, HttpError::Status(s, _) if *s >= 500 || *s == 429)
}

#[retry(
    attempts = 3,
    backoff = "10ms",
    budget = 0,
    budget_floor = 1,
    budget_window = "4s"
)]
#[breaker(name = "oj-shared", window_calls = 1000, min_calls = 1000)]
async fn shared(client: &Client, url: &str) -> Result<u16, HttpError> {
    get(client, url).await
}

/// The tower `RetryLayer` with hints in front of `BreakerLayer` of the attribute's name, on
/// the same real dependency: one budget (here the floor alone, 4 retries in 4 s) for both,
/// each attempt a call of the one breaker; and a `Retry-After` read by the layer holds that
/// breaker open for the attribute's callers too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tower_retry_layer_shares_the_attributes_budget_and_hold() {
    let (up, base) = Upstream::start(|_, path| match path {
        "/throttle" => (503, Some(1), Duration::ZERO),
        _ => (503, None, Duration::ZERO),
    })
    .await;
    let http = client();
    let url = format!("{base}/down");
    // The attribute takes 2 retries of the 4 (two calls of 3 attempts would want 4).
    assert!(matches!(
        shared(&http, &url).await,
        Err(HttpError::Status(503, None))
    ));
    assert_eq!(up.count("/down"), 3);

    let tower_http = http.clone();
    let svc = ServiceBuilder::new()
        .layer(
            RetryLayer::new(
                Retry::builder("oj-shared")
                    .attempts(3)
                    .backoff(Backoff::new(ms(10), ms(20)))
                    .build()
                    .unwrap(),
            )
            .hints(tower_retry_on, server_hint),
        )
        .layer(
            BreakerLayer::new(
                Breaker::builder("oj-shared")
                    .window_calls(1000)
                    .min_calls(1000),
            )
            .unwrap(),
        )
        .service(service_fn(move |url: String| {
            let http = tower_http.clone();
            async move { get(&http, &url).await }
        }));
    // The layer takes the 2 retries left, then the budget refuses.
    for _ in 0..2 {
        let r = svc.clone().oneshot(url.clone()).await;
        assert!(
            matches!(r, Err(Error::Failed(HttpError::Status(503, None)))),
            "{r:?}"
        );
    }
    assert_eq!(up.count("/down"), 3 + 3 + 1);
    let m = fusebox::metrics();
    let rm = m.retry("oj-shared").unwrap();
    assert_eq!((rm.calls, rm.retries), (3, 4), "{rm:?}");
    assert!(rm.budget_exhausted >= 1, "{rm:?}");
    let b = registry().breaker("oj-shared").unwrap();
    assert_eq!(
        b.metrics().failed,
        7,
        "every attempt a call of the one breaker"
    );

    // A throttle hint read by the layer holds the breaker open for the attribute's callers.
    let r = svc.clone().oneshot(format!("{base}/throttle")).await;
    assert!(r.is_err(), "{r:?}");
    assert_eq!(b.state(), State::ForcedOpen);
    let before = up.count("");
    let r = shared(&http, &url).await;
    assert!(
        matches!(r, Err(HttpError::Refused(Rejection::Open { .. }))),
        "{r:?}"
    );
    assert_eq!(
        up.count(""),
        before,
        "held: the attribute's call never left"
    );
    tokio::time::sleep(ms(1100)).await;
    assert_ne!(
        b.state(),
        State::ForcedOpen,
        "the hold lapsed after the 1 s asked"
    );
}

/// The key of a request: its URL's host and port. A key function takes `&Request`, and the
/// request is a `String` here.
#[allow(clippy::ptr_arg)]
fn authority(url: &String) -> Option<String> {
    url.split('/').nth(2).map(str::to_owned)
}

/// A tower client keyed by host (`BreakerLayer::keyed`) with a `RetryLayer` reading
/// `Retry-After`, against two real dependencies under 100 calls a second each: the one that
/// rate-limits (429, `Retry-After: 2`, from 0.5 s to 2.5 s) is held for the 2 s it asked and
/// receives nothing meanwhile, then calls resume; the other one never stops being called.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tower_hint_holds_only_the_host_that_gave_it() {
    let (limited, limited_base) = Upstream::start(|at, _| {
        if at >= ms(500) && at < ms(2500) {
            (429, Some(2), Duration::ZERO)
        } else {
            (200, None, Duration::ZERO)
        }
    })
    .await;
    let (other, other_base) = Upstream::start(|_, _| (200, None, Duration::ZERO)).await;
    let http = client();
    let svc = ServiceBuilder::new()
        .layer(
            RetryLayer::new(
                Retry::builder("oj-tower-hosts")
                    .attempts(3)
                    .build()
                    .unwrap(),
            )
            .hints(tower_retry_on, server_hint),
        )
        .layer(
            BreakerLayer::keyed(
                Breaker::builder("oj-tower-hosts")
                    .open_for(secs(5))
                    .half_open_calls(2),
                authority as fn(&String) -> Option<String>,
            )
            .unwrap(),
        )
        .service(service_fn(move |url: String| {
            let http = http.clone();
            async move { get(&http, &url).await }
        }));
    let (l, o) = (
        format!("{limited_base}/limited"),
        format!("{other_base}/other"),
    );
    let (svc2, l2) = (svc.clone(), l.clone());
    let (to_limited, _) = tokio::join!(
        open_loop(&limited, 100, ms(4000), move || svc2
            .clone()
            .oneshot(l2.clone())),
        open_loop(&other, 100, ms(4000), move || svc
            .clone()
            .oneshot(o.clone())),
    );
    let first = limited.hits_between("/limited", ms(500), ms(2500))[0].0;
    let quiet = limited.hits_between("/limited", first + ms(300), ms(2500));
    assert!(
        quiet.is_empty(),
        "called while held: {quiet:?} (first 429 at {first:?})"
    );
    let back = limited.hits_between("/limited", ms(2500), ms(4000)).len();
    assert!(back >= 50, "calls resumed after the hold: {back}");
    // The other host: called all along, while the limited one was held too (about 100 calls
    // a second; held, it would have had none).
    let meanwhile = other
        .hits_between("/other", first + ms(300), ms(2500))
        .len();
    assert!(
        meanwhile >= 100,
        "{meanwhile} calls to the other host during the hold"
    );
    let refused = to_limited
        .iter()
        .filter(|(_, _, r)| matches!(r, Err(Error::Rejected(Rejection::Open { .. }))))
        .count();
    assert!(
        refused >= 100,
        "{refused} calls to the limited host refused while held"
    );
    let key = format!("oj-tower-hosts/{}", authority(&limited_base).unwrap());
    assert_eq!(registry().breaker(&key).unwrap().state(), State::Closed);
}

/// The tower `RetryLayer` retries what the breaker counts as a failure, as the attribute does:
/// not an error the classifier calls a success (a 404 is the dependency answering) or ignores
/// (a request it refused as malformed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tower_retry_layer_does_not_retry_what_the_breaker_does_not_count() {
    let (up, base) = statuses().await;
    let http = client();
    fn classify(r: &Result<u16, HttpError>) -> Outcome {
        match r {
            Ok(_) | Err(HttpError::Status(404, _)) => Outcome::Success,
            Err(HttpError::Status(400 | 429, _)) => Outcome::Ignored,
            Err(_) => Outcome::Failure,
        }
    }
    let svc = ServiceBuilder::new()
        .layer(RetryLayer::new(
            Retry::builder("oj-tower-counted")
                .attempts(3)
                .backoff(Backoff::new(ms(10), ms(20)))
                .build()
                .unwrap(),
        ))
        .layer(
            BreakerLayer::new(
                Breaker::builder("oj-tower-counted")
                    .window_calls(1000)
                    .min_calls(1000),
            )
            .unwrap()
            .failure(Classified(
                classify as fn(&Result<u16, HttpError>) -> Outcome,
            )),
        )
        .service(service_fn(move |url: String| {
            let http = http.clone();
            async move { get(&http, &url).await }
        }));
    for (path, attempts) in [("/missing", 1), ("/bad", 1), ("/down", 3)] {
        let r = svc.clone().oneshot(format!("{base}{path}")).await;
        assert!(
            matches!(r, Err(Error::Failed(HttpError::Status(..)))),
            "{r:?}"
        );
        assert_eq!(up.count(path), attempts, "{path}");
    }
}
