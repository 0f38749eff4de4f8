//! Issue 30: `retry_after` holds the breaker open for every caller.

use super::*;

#[retry(attempts = 4, retry_after = server_hint)]
#[breaker(
    name = "oj-ban",
    timeout = "1s",
    open_for = "3s",
    half_open_calls = 2,
    fallback = degraded
)]
async fn banned(client: &Client, url: &str) -> Result<Answer, HttpError> {
    get(client, url).await.map(Answer::Dep)
}

/// The dependency answers `503` with `Retry-After: 2` for two seconds (from 1 s to 3 s into
/// the test), under 300 calls a second from as many tasks. The first `503` holds the breaker
/// open for the 2 s it asked for: the dependency receives no call during them (only the
/// requests already on the wire when the first answer came); every caller meanwhile gets the
/// fallback at once, never retried; then calls resume and the breaker closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_holds_the_breaker_open_under_real_load() {
    // Every answer takes 40 ms: about a dozen calls are in flight when the first 503 lands.
    let (up, base) = Upstream::start(|at, _| {
        if at >= ms(1000) && at < ms(3000) {
            (503, Some(2), ms(40))
        } else {
            (200, None, ms(40))
        }
    })
    .await;
    let http = client();
    let url = format!("{base}/ban");
    let calls = open_loop(&up, 300, ms(5000), || {
        let (http, url) = (http.clone(), url.clone());
        async move { banned(&http, &url).await }
    })
    .await;

    let told = up.hits_between("/ban", ms(1000), ms(3000));
    let first = told
        .first()
        .expect("the dependency answered 503 at least once")
        .0;
    // Requests already on the wire when the first 503 came back may still land; 300 ms is
    // room for a loaded machine. After that, nothing until the 2 s are over.
    let late = first + ms(300);
    let quiet = up.hits_between("/ban", late, ms(3000));
    assert!(
        quiet.is_empty(),
        "the dependency was called while it had asked for no calls: {quiet:?} (first 503 at {first:?})"
    );
    assert!(
        told.len() <= 64,
        "only the calls in flight were told: {}",
        told.len()
    );
    // Calls resume once the hold lapses: trials, then all traffic.
    let resumed = up.hits_between("/ban", ms(3000), ms(5000)).len();
    eprintln!(
        "oj-ban: first 503 at {first:?}, {} told, {resumed} calls in the 2 s after",
        told.len()
    );
    assert!(
        resumed >= 300,
        "calls resumed after the hold: {resumed} of ~600"
    );
    assert_eq!(registry().breaker("oj-ban").unwrap().state(), State::Closed);

    // Every call that started during the hold was refused, answered by the fallback at once,
    // and never retried (the dependency saw none of them).
    let during: Vec<_> = calls
        .iter()
        .filter(|(at, _, _)| *at >= late && *at < ms(2900))
        .collect();
    assert!(
        during.len() >= 300,
        "{} calls during the hold (~480 offered)",
        during.len()
    );
    for (at, _, r) in &during {
        assert_eq!(r.as_ref().unwrap(), &Answer::Refused, "call at {at:?}");
    }
    let at_once = p95(during.iter().copied());
    assert!(
        at_once < ms(300),
        "the fallback answered at once, not after {at_once:?}"
    );
    let m = fusebox::metrics();
    let rm = m.retry("oj-ban").unwrap();
    assert!(rm.held_open >= 1, "{rm:?}");
    assert!(
        rm.retries as usize <= told.len(),
        "only the told callers retried: {rm:?}, {} told",
        told.len()
    );
}

#[retry(attempts = 4, retry_after = server_hint, total = "3s")]
#[breaker(
    name = "oj-cap",
    timeout = "1s",
    open_for = "1s",
    half_open_calls = 2,
    fallback = degraded
)]
async fn rate_limited(client: &Client, url: &str) -> Result<Answer, HttpError> {
    get(client, url).await.map(Answer::Dep)
}

/// A hint longer than the breaker's longest open period (`open_for` = 1 s, no growth) holds
/// it only that long: the dependency asks for 30 s, other callers are back after ~1 s; the
/// told callers, whose `total` (3 s) cannot fit a 30 s wait, get the fallback at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_hint_holds_the_breaker_only_up_to_its_cap() {
    let (up, base) = Upstream::start(|at, _| {
        if at >= ms(1000) && at < ms(1600) {
            (429, Some(30), Duration::ZERO)
        } else {
            (200, None, Duration::ZERO)
        }
    })
    .await;
    let http = client();
    let url = format!("{base}/cap");
    let calls = open_loop(&up, 200, ms(4000), || {
        let (http, url) = (http.clone(), url.clone());
        async move { rate_limited(&http, &url).await }
    })
    .await;

    let told = up.hits_between("/cap", ms(1000), ms(1600));
    let first = told.first().expect("the dependency answered 429").0;
    let quiet = up.hits_between("/cap", first + ms(300), first + ms(950));
    assert!(
        quiet.is_empty(),
        "called during the hold: {quiet:?} (first 429 at {first:?})"
    );
    // Held for the cap (1 s), not the 30 s asked: back well before the test ends.
    let back = up
        .hits_between("/cap", first + ms(1000), first + ms(2000))
        .len();
    eprintln!(
        "oj-cap: first 429 at {first:?}, {} told, {back} calls in the second after the cap",
        told.len()
    );
    assert!(back >= 50, "calls resumed after the cap: {back}");
    assert_eq!(registry().breaker("oj-cap").unwrap().state(), State::Closed);
    for (at, took, r) in &calls {
        assert!(
            *took < secs(5),
            "no caller waited the 30 s: {took:?} at {at:?} ({r:?})"
        );
    }
    let told_callers = calls
        .iter()
        .filter(|(_, _, r)| r.as_ref().unwrap() == &Answer::Failed)
        .count();
    assert!(
        told_callers >= 1 && told_callers <= told.len(),
        "{told_callers} of {}",
        told.len()
    );
    assert_eq!(fusebox::metrics().retry("oj-cap").unwrap().retries, 0);
}

#[retry(attempts = 1, retry_after = server_hint)]
#[breaker(name = "oj-short-hint", open_for = "3s", half_open_calls = 1, fallback = degraded)]
async fn short_hint(client: &Client, url: &str) -> Result<Answer, HttpError> {
    get(client, url).await.map(Answer::Dep)
}

/// A hint shorter than the breaker's own open period does not shorten it: "open until then"
/// is at least until then. The dependency keeps answering `503` with `Retry-After: 1`; the
/// first answer holds the breaker 1 s, the trial after it fails and the breaker opens for its
/// `open_for` (3 s), which the trial's own 1 s hint must not cut to 1 s: one caller calling
/// every 20 ms reaches the dependency at about 0, 1 and 4 s, not every second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_hint_does_not_shorten_the_breakers_own_open_period() {
    let (up, base) = Upstream::start(|_, _| (503, Some(1), Duration::ZERO)).await;
    let http = client();
    let url = format!("{base}/short");
    while up.now() < ms(5500) {
        let _ = short_hint(&http, &url).await;
        tokio::time::sleep(ms(20)).await;
    }
    let hits: Vec<_> = up.hits_between("/short", Duration::ZERO, Duration::MAX);
    eprintln!(
        "oj-short-hint: calls at {:?}",
        hits.iter().map(|h| h.0).collect::<Vec<_>>()
    );
    assert!(hits.len() >= 3, "{hits:?}");
    let gap = hits[2].0 - hits[1].0;
    assert!(
        gap >= ms(2900),
        "the failed trial's open period was cut to {gap:?}: {hits:?}"
    );
    assert_eq!(hits.len(), 3, "{hits:?}");
}

#[retry(attempts = 3, retry_after = server_hint, hold_open = false, budget = 100)]
#[breaker(name = "oj-paced", window_calls = 1000, min_calls = 1000)]
async fn paced(client: &Client, url: &str) -> Result<u16, HttpError> {
    get(client, url).await
}

/// `hold_open = false` paces only the caller that was told, and a caller that gives up while
/// it waits makes no more attempts: every call answered `503, Retry-After: 1` is dropped by
/// its caller 300 ms later (a deadline of its own). Under 100 calls a second the dependency
/// keeps receiving every new call (nothing held), and exactly one per call (no retry was
/// made, and the budget was given back the retries it granted: with `budget = 100` it
/// refuses few or none while they come back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_that_gives_up_during_the_wait_makes_no_more_attempts() {
    let (up, base) = Upstream::start(|_, _| (503, Some(1), Duration::ZERO)).await;
    let http = client();
    let url = format!("{base}/paced");
    let calls = open_loop(&up, 100, ms(2000), || {
        let (http, url) = (http.clone(), url.clone());
        async move { tokio::time::timeout(ms(300), paced(&http, &url)).await }
    })
    .await;
    tokio::time::sleep(ms(1200)).await;
    // Each caller gave up, or had its 503 at once where the budget refused the retry.
    let answered = calls.iter().filter(|(_, _, r)| r.is_ok()).count();
    eprintln!(
        "oj-paced: {} calls, {answered} refused a retry by the budget",
        calls.len()
    );
    assert_eq!(up.count("/paced"), calls.len(), "one attempt per call");
    for quarter in 0..8 {
        let from = ms(250 * quarter);
        let n = up.hits_between("/paced", from, from + ms(250)).len();
        assert!(n >= 10, "{n} calls in [{from:?}, +250ms): held?");
    }
    let m = fusebox::metrics();
    let rm = m.retry("oj-paced").unwrap();
    assert_eq!(
        (rm.calls, rm.retries, rm.held_open),
        (calls.len() as u64, 0, 0),
        "{rm:?}"
    );
    assert_eq!(rm.budget_exhausted, answered as u64, "{rm:?}");
    assert!(
        answered < calls.len() / 10,
        "{answered} refused by the budget: {rm:?}"
    );
    assert_eq!(
        registry().breaker("oj-paced").unwrap().state(),
        State::Closed
    );
}
