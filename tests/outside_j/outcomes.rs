//! Issue 31: outcomes of real responses.

use super::*;

/// An answer as the scenario sees it, from the attribute or from tower.
#[derive(Debug, PartialEq)]
enum Reply {
    Status(u16),
    Refused,
}

/// The dependency: each path answers its status, `/slow-bad` a 400 after 500 ms.
pub(crate) async fn statuses() -> (Arc<Upstream>, String) {
    Upstream::start(|_, path| match path {
        "/ok" => (200, None, Duration::ZERO),
        "/missing" => (404, None, Duration::ZERO),
        "/bad" => (400, None, Duration::ZERO),
        "/busy" => (429, None, Duration::ZERO),
        "/slow-bad" => (400, None, ms(500)),
        _ => (503, None, Duration::ZERO),
    })
    .await
}

/// Issue 31's outcomes, through whichever client `call` is, against real responses:
/// 404 a success, 400 and 429 ignored, a 503 the client returns as `Ok` a failure. The
/// breaker (`window_calls = 10`, `min_calls = 10`, 50 %, `open_for = 1s`,
/// `half_open_calls = 3`) opens exactly when the rule says, and ignored calls in half-open,
/// many at once, neither close nor reopen it and give their trial slots back.
async fn outcomes_scenario<F, Fut>(name: &str, up: &Upstream, call: F)
where
    F: Fn(&'static str) -> Fut,
    Fut: Future<Output = Reply> + Send + 'static,
{
    let b = registry().breaker(name).unwrap();
    let burst = |path: &'static str, n: usize| {
        let calls: Vec<_> = (0..n).map(|_| tokio::spawn(call(path))).collect();
        async move {
            let mut out = Vec::new();
            for c in calls {
                out.push(c.await.unwrap());
            }
            out
        }
    };
    // A stream of 404s, 64 at once: the dependency answering, never a failure.
    for _ in 0..4 {
        let r = burst("/missing", 64).await;
        assert!(r.iter().all(|r| *r == Reply::Status(404)), "{r:?}");
    }
    let m = b.metrics();
    assert_eq!((m.state, m.failed, m.window_calls), (State::Closed, 0, 10));
    // Ignored 400s and 429s: no place in the window, whatever their number.
    for path in ["/bad", "/busy", "/bad", "/busy"] {
        let r = burst(path, 64).await;
        assert!(
            r.iter().all(|r| matches!(r, Reply::Status(400 | 429))),
            "{r:?}"
        );
    }
    let m = b.metrics();
    assert_eq!(
        (m.state, m.failed, m.window_calls, m.failure_rate),
        (State::Closed, 0, 10, 0.0)
    );
    let ignored_before = m.ignored;

    // 503s handed back as `Ok`: the fifth makes the last ten calls 50 % failures and opens
    // the breaker; each caller still gets its 503.
    for n in 1..=5 {
        assert_eq!(call("/down").await, Reply::Status(503), "503 number {n}");
        let expected = if n < 5 { State::Closed } else { State::Open };
        assert_eq!(b.state(), expected, "after {n} 503s");
    }
    assert_eq!(call("/down").await, Reply::Refused);
    assert_eq!(
        up.count("/down"),
        5,
        "open: the sixth never reached the dependency"
    );

    // Half-open after `open_for`. 64 slow ignored calls at once: at most 3 trials reach the
    // dependency at a time, the rest are refused; none is judged.
    tokio::time::sleep(ms(1100)).await;
    up.reset_peak();
    let r = burst("/slow-bad", 64).await;
    let reached = r.iter().filter(|r| **r == Reply::Status(400)).count();
    assert!(
        (1..=3).contains(&reached),
        "{reached} trials at once: {r:?}"
    );
    assert!(
        up.peak.load(SeqCst) <= 3,
        "trials in flight: {}",
        up.peak.load(SeqCst)
    );
    assert_eq!(up.count("/slow-bad"), reached);
    assert_eq!(
        b.state(),
        State::HalfOpen,
        "ignored trials neither pass nor fail"
    );
    // Their slots came back: 20 ignored calls one after another each get one.
    for _ in 0..20 {
        assert_eq!(call("/bad").await, Reply::Status(400));
    }
    assert_eq!(b.state(), State::HalfOpen);
    // Three counted trials pass (a 404 is one): closed.
    assert_eq!(call("/ok").await, Reply::Status(200));
    assert_eq!(call("/missing").await, Reply::Status(404));
    assert_eq!(b.state(), State::HalfOpen);
    assert_eq!(call("/ok").await, Reply::Status(200));
    assert_eq!(b.state(), State::Closed);

    // Every class in its counter: metrics and Prometheus agree.
    let m = b.metrics();
    assert_eq!(m.failed, 5);
    // `ignored` is the ignored outcome's own: an `Err` the `failure` predicate excludes (the
    // attribute's 404) is a success, as tower's 404, an `Ok`, is.
    assert_eq!(m.ignored - ignored_before, reached as u64 + 20);
    let text = fusebox::metrics().to_prometheus();
    for (outcome, n) in [
        ("failed", m.failed),
        ("ignored", m.ignored),
        ("succeeded", m.succeeded),
    ] {
        let line =
            format!("fusebox_breaker_calls_total{{breaker=\"{name}\",outcome=\"{outcome}\"}} {n}");
        assert!(text.contains(&line), "{line} not in:\n{text}");
    }
}

/// What the client treats as which outcome.
#[derive(Debug, Clone)]
#[allow(dead_code)] // The fields are read by `Debug`, in failure messages.
enum ApiError {
    NotFound,
    Invalid(u16),
    Other(HttpError),
    Refused(Rejection),
}

impl From<Rejection> for ApiError {
    fn from(r: Rejection) -> Self {
        ApiError::Refused(r)
    }
}

/// `failure = ..`: a 404 is the dependency answering.
fn counts(e: &ApiError) -> bool {
    !matches!(e, ApiError::NotFound)
}

/// `ignore = ..`: a request the dependency refused as malformed or throttled says nothing of
/// its health.
fn client_side(e: &ApiError) -> bool {
    matches!(e, ApiError::Invalid(_))
}

/// `failure_if_ok = ..`: this client hands 5xx back as `Ok`.
fn server_error(status: &u16) -> bool {
    *status >= 500
}

/// GET `url`: 2xx and 5xx as `Ok(status)`, 404 and 400/429 as errors.
async fn api_get(client: &Client, url: &str) -> Result<u16, ApiError> {
    let res = client
        .get(url)
        .send()
        .await
        .map_err(|e| ApiError::Other(HttpError::Transport(e.to_string())))?;
    match res.status().as_u16() {
        404 => Err(ApiError::NotFound),
        s @ (400 | 429) => Err(ApiError::Invalid(s)),
        s => Ok(s),
    }
}

#[breaker(
    name = "oj-outcomes",
    failure = counts,
    ignore = client_side,
    failure_if_ok = server_error,
    window_calls = 10,
    min_calls = 10,
    failure_rate = 50,
    open_for = "1s",
    half_open_calls = 3
)]
async fn classified(client: &Client, url: &str) -> Result<u16, ApiError> {
    api_get(client, url).await
}

fn reply(r: Result<u16, ApiError>) -> Reply {
    match r {
        Ok(s) => Reply::Status(s),
        Err(ApiError::NotFound) => Reply::Status(404),
        Err(ApiError::Invalid(s)) => Reply::Status(s),
        Err(ApiError::Refused(Rejection::Open { .. })) => Reply::Refused,
        Err(e) => panic!("unexpected: {e:?}"),
    }
}

/// The attribute's `failure`, `ignore` and `failure_if_ok` on real responses, under bursts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_attribute_classifies_real_responses() {
    let (up, base) = statuses().await;
    let http = client();
    outcomes_scenario("oj-outcomes", &up, |path| {
        let (http, url) = (http.clone(), format!("{base}{path}"));
        async move { reply(classified(&http, &url).await) }
    })
    .await;
}

/// The status of a real response, or the transport's error.
type Http = Result<u16, reqwest::Error>;

/// The tower classifier: one function for the three outcomes, as `Classified` takes it.
fn outcome_of(r: &Http) -> Outcome {
    match r {
        Ok(404) => Outcome::Success,
        Ok(400 | 429) => Outcome::Ignored,
        Ok(s) if *s >= 500 => Outcome::Failure,
        Ok(_) => Outcome::Success,
        Err(_) => Outcome::Failure,
    }
}

/// The same scenario through a tower stack: `BreakerLayer` with `Classified` in front of a
/// real HTTP client whose every status is an `Ok`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tower_layer_classifies_real_responses() {
    let (up, base) = statuses().await;
    let http = client();
    let settings = Breaker::builder("oj-tower-outcomes")
        .window_calls(10)
        .min_calls(10)
        .failure_rate(50)
        .open_for(secs(1))
        .half_open_calls(3);
    let svc = ServiceBuilder::new()
        .layer(
            BreakerLayer::new(settings)
                .unwrap()
                .failure(Classified(outcome_of as fn(&Http) -> Outcome)),
        )
        .service(service_fn(move |url: String| {
            let http = http.clone();
            async move { http.get(url).send().await.map(|r| r.status().as_u16()) }
        }));
    outcomes_scenario("oj-tower-outcomes", &up, |path| {
        let (svc, url) = (svc.clone(), format!("{base}{path}"));
        async move {
            match svc.oneshot(url).await {
                Ok(s) => Reply::Status(s),
                Err(Error::Rejected(Rejection::Open { .. })) => Reply::Refused,
                Err(e) => panic!("unexpected: {e:?}"),
            }
        }
    })
    .await;
}
