//! Issue 30: seed 002, a dependency that turns slow.

use super::*;

#[retry(attempts = 3, idempotent)]
#[breaker(
    name = "oj-slow-read",
    timeout = "500ms",
    window_calls = 1000,
    min_calls = 1000
)]
async fn slow_read(client: &Client, url: &str) -> Result<u16, HttpError> {
    get(client, url).await
}

#[retry(attempts = 3)]
#[breaker(
    name = "oj-slow-pay",
    timeout = "500ms",
    window_calls = 1000,
    min_calls = 1000
)]
async fn slow_pay(client: &Client, url: &str) -> Result<u16, HttpError> {
    get(client, url).await
}

fn timed_out(r: &Result<u16, HttpError>) -> bool {
    matches!(r, Err(HttpError::Refused(Rejection::TimedOut { .. })))
}

/// Seed 002 for real: the dependency answers after 3 s, callers time out at 500 ms and ask for
/// 3 attempts, 40 requests a second for 3 s (the breaker is set not to open, so only the
/// budget stands between the callers and 3x the load). An idempotent read retries within the
/// budget (20 % of the name's calls over 10 s plus 1 a second: 10 in the window) and the
/// dependency receives far fewer than 3 calls per request; a payment (not idempotent) is
/// never retried after a timeout: exactly one call per request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_dependency_gets_retries_only_within_the_budget() {
    let (up, base) = Upstream::start(|_, _| (200, None, secs(3))).await;
    let http = client();
    let (read, pay) = (format!("{base}/read"), format!("{base}/pay"));
    let (reads, pays) = tokio::join!(
        open_loop(&up, 40, ms(3000), || {
            let (http, url) = (http.clone(), read.clone());
            async move { slow_read(&http, &url).await }
        }),
        open_loop(&up, 40, ms(3000), || {
            let (http, url) = (http.clone(), pay.clone());
            async move { slow_pay(&http, &url).await }
        }),
    );
    // Every attempt was sent before its 500 ms ran out; give the last ones time to land.
    tokio::time::sleep(ms(300)).await;
    let m = fusebox::metrics();

    // The payment: one call per request, each timed out after one timeout, not three.
    let rm = m.retry("oj-slow-pay").unwrap();
    assert_eq!(rm.calls as usize, pays.len());
    assert_eq!((rm.retries, rm.attempts), (0, rm.calls), "{rm:?}");
    assert_eq!(up.count("/pay"), pays.len(), "one call per payment");
    for (at, _, r) in &pays {
        assert!(timed_out(r), "{r:?} at {at:?}");
    }
    let once = p95(&pays);
    assert!(once < ms(1000), "not retried: answered in {once:?} (p95)");

    // The read: retried, within the budget.
    let rm = m.retry("oj-slow-read").unwrap();
    let calls = reads.len() as u64;
    assert_eq!(rm.calls, calls);
    let bound = calls * 20 / 100 + 10;
    assert!(
        rm.retries >= 10 && rm.retries <= bound,
        "{} retries for {calls} calls, budget {bound}: {rm:?}",
        rm.retries
    );
    assert!(rm.budget_exhausted > 0, "{rm:?}");
    let received = up.count("/read") as u64;
    assert!(
        received <= rm.attempts && received + 2 >= rm.attempts,
        "the dependency received {received}, {rm:?}"
    );
    let per_request = received as f64 / calls as f64;
    eprintln!(
        "oj-slow-read: {calls} requests, {received} received ({per_request:.2} each), {rm:?}"
    );
    assert!(
        per_request <= 1.35,
        "{per_request:.2} calls per request (3 without a budget)"
    );
    assert!(reads.iter().all(|(_, _, r)| timed_out(r)));
    let b = registry().breaker("oj-slow-read").unwrap().metrics();
    assert_eq!(
        b.timed_out, rm.attempts,
        "each attempt a call of the breaker"
    );
}

#[retry(attempts = 3, idempotent, total = "1200ms", budget = 100)]
#[breaker(
    name = "oj-deadline",
    timeout = "500ms",
    window_calls = 1000,
    min_calls = 1000
)]
async fn within_deadline(client: &Client, url: &str) -> Result<u16, HttpError> {
    get(client, url).await
}

/// `total` under real load: with 500 ms attempts and a 1.2 s deadline, a second attempt fits
/// and a third never starts (it could not end in time), whatever the budget allows: the
/// dependency (answering in 3 s) receives at most two calls per request and every caller has
/// its answer within the deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_attempt_starts_that_could_not_end_before_the_deadline() {
    let (up, base) = Upstream::start(|_, _| (200, None, secs(3))).await;
    let http = client();
    let url = format!("{base}/deadline");
    let calls = open_loop(&up, 40, ms(2000), || {
        let (http, url) = (http.clone(), url.clone());
        async move { within_deadline(&http, &url).await }
    })
    .await;
    tokio::time::sleep(ms(300)).await;
    let received = up.count("/deadline");
    let m = fusebox::metrics();
    let rm = m.retry("oj-deadline").unwrap();
    eprintln!(
        "oj-deadline: {} requests, {received} received, {rm:?}",
        calls.len()
    );
    assert!(
        received <= 2 * calls.len(),
        "{received} calls for {} requests",
        calls.len()
    );
    assert!(
        rm.retries >= calls.len() as u64 / 2,
        "a second attempt fits: {rm:?}"
    );
    for (at, _, r) in &calls {
        assert!(timed_out(r), "{r:?} at {at:?}");
    }
    // Within the deadline (plus a scheduler's slack): three attempts would take 1.5 s.
    let within = p95(&calls);
    assert!(within < ms(1400), "answered after {within:?} (p95)");
}

#[retry(attempts = 3, budget = 100)]
#[breaker(name = "oj-pool", timeout = "1s", window_calls = 20, fallback = degraded)]
#[bulkhead(pool = 4)]
async fn pooled(client: &Client, url: &str) -> Result<Answer, HttpError> {
    get(client, url).await.map(Answer::Dep)
}

/// A full bulkhead is never retried and never a failure: a healthy dependency that takes
/// 200 ms, behind a pool of 4, under 100 calls a second. It never has more than 4 calls at
/// once, the calls the pool refuses get the fallback at once, no retry is ever asked of the
/// budget, and the breaker stays closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_bulkhead_is_never_retried() {
    let (up, base) = Upstream::start(|_, _| (200, None, ms(200))).await;
    let http = client();
    let url = format!("{base}/pool");
    let calls = open_loop(&up, 100, ms(2000), || {
        let (http, url) = (http.clone(), url.clone());
        async move { pooled(&http, &url).await }
    })
    .await;
    let refused: Vec<_> = calls
        .iter()
        .filter(|(_, _, r)| r.as_ref().unwrap() == &Answer::Refused)
        .collect();
    let served = calls.len() - refused.len();
    eprintln!(
        "oj-pool: {} calls, {served} served, peak {}",
        calls.len(),
        up.peak.load(SeqCst)
    );
    assert!(
        up.peak.load(SeqCst) <= 4,
        "in flight at once: {}",
        up.peak.load(SeqCst)
    );
    assert_eq!(
        up.count("/pool"),
        served,
        "every call that reached it was served"
    );
    assert!(
        refused.len() >= calls.len() / 2,
        "{} refused of {}",
        refused.len(),
        calls.len()
    );
    let at_once = p95(refused.iter().copied());
    assert!(
        at_once < ms(150),
        "refused at once, not after {at_once:?} (p95)"
    );
    let m = fusebox::metrics();
    let rm = m.retry("oj-pool").unwrap();
    assert_eq!((rm.retries, rm.budget_exhausted), (0, 0), "{rm:?}");
    let b = registry().breaker("oj-pool").unwrap();
    assert_eq!((b.state(), b.metrics().failed), (State::Closed, 0));
    assert_eq!(
        b.metrics().rejected_by_bulkhead,
        refused.len() as u64,
        "each refusal once"
    );
}
