//! `key = ...` with `max_keys`: a key taken from requests cannot grow the registry without bound.

#[path = "common/log.rs"]
mod log;

use std::time::Duration;

use fusebox::{breaker, registry, Rejection, OVERFLOW_KEY};

#[derive(Debug, PartialEq)]
enum FetchError {
    Unavailable(Rejection),
}

impl From<Rejection> for FetchError {
    fn from(r: Rejection) -> Self {
        FetchError::Unavailable(r)
    }
}

#[breaker(name = "keys-fetch", key = host, max_keys = 100)]
async fn fetch(host: &str) -> Result<usize, FetchError> {
    Ok(host.len())
}

#[tokio::test(start_paused = true)]
async fn ten_thousand_distinct_hosts_all_go_through_on_at_most_101_breakers() {
    for i in 0..10_000 {
        let host = format!("h{i}.example");
        assert_eq!(
            fetch(&host).await,
            Ok(host.len()),
            "never refused by the cap"
        );
    }
    let mine: Vec<_> = registry()
        .breakers()
        .into_iter()
        .filter(|b| b.name().starts_with("keys-fetch/"))
        .collect();
    assert!(mine.len() <= 101, "{}", mine.len());
    assert!(mine.iter().any(|b| b.config().key() == Some(OVERFLOW_KEY)));
    assert_eq!(mine[0].config().max_keys(), 100);
}

#[breaker(name = "keys-hung", key = host, max_keys = 1, trip_p95 = "100ms", window_calls = 10, min_calls = 5)]
async fn hung(host: &str, hang: bool) -> Result<(), FetchError> {
    if hang {
        std::future::pending::<()>().await;
    }
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_key_whose_calls_hang_keeps_its_breaker_at_the_cap_and_opens_on_them() {
    let calls: Vec<_> = (0..6).map(|_| tokio::spawn(hung("a", true))).collect();
    tokio::time::sleep(Duration::from_millis(10)).await;
    // A new key at the cap: `a` has nothing in its window yet, but six calls in flight.
    assert_eq!(hung("b", false).await, Ok(()));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let a = fusebox::metrics()
        .breaker("keys-hung/a")
        .cloned()
        .expect("the hung key is still listed");
    assert_eq!(a.slow, 6, "its hung calls are seen on it: {a:#?}");
    assert_eq!(a.state, fusebox::State::Open);
    assert_eq!(
        registry()
            .breaker(&format!("keys-hung/{OVERFLOW_KEY}"))
            .map(|b| b.metrics().calls),
        Some(1),
        "the new key shared the overflow breaker"
    );
    for c in calls {
        c.abort();
    }
}

#[breaker(name = "keys-hung-quiet", key = host, max_keys = 1, window_calls = 10)]
async fn hung_quiet(host: &str, hang: bool) -> Result<(), FetchError> {
    let _ = host;
    if hang {
        std::future::pending::<()>().await;
    }
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_count_window_key_hung_past_30s_is_not_quiet() {
    let call = tokio::spawn(hung_quiet("a", true));
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(hung_quiet("b", false).await, Ok(()));
    assert!(registry().breaker("keys-hung-quiet/a").is_some());
    call.abort();
    tokio::task::yield_now().await;
    // Its call ended (cancelled): the key is quiet again and makes room.
    tokio::time::sleep(Duration::from_secs(31)).await;
    assert_eq!(hung_quiet("c", false).await, Ok(()));
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(hung_quiet("d", false).await, Ok(()));
    assert!(registry().breaker("keys-hung-quiet/a").is_none());
}

#[breaker(name = "keys-overflow-log", key = host, max_keys = 1)]
async fn overflowing(host: &str) -> Result<(), FetchError> {
    let _ = host;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn an_overflow_is_logged_at_error_on_the_1st_2nd_4th_and_8th_occurrence() {
    let log = log::log();
    assert_eq!(overflowing("first").await, Ok(()));
    registry()
        .breaker("keys-overflow-log/first")
        .unwrap()
        .force_open();
    for i in 0..10 {
        let _ = overflowing(&format!("k{i}")).await;
    }
    let overflows = log.count(tracing::Level::ERROR, "keys-overflow-log", "max_keys");
    assert_eq!(
        overflows,
        4,
        "1st, 2nd, 4th and 8th of 10: {:?}",
        log.of("keys-overflow-log")
    );
}

#[breaker(name = "keys-queued", key = host, max_keys = 2)]
#[fusebox::bulkhead(name = "keys-queued-pool", pool = 1, max_wait = "60s")]
async fn queued(host: &str, hang: bool) -> Result<(), FetchError> {
    let _ = host;
    if hang {
        std::future::pending::<()>().await;
    }
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_key_whose_call_waits_for_a_bulkhead_slot_keeps_its_breaker() {
    let z = tokio::spawn(queued("z", true));
    tokio::task::yield_now().await;
    // Key a's call is admitted by its breaker and queues for the pool's one slot.
    let a = tokio::spawn(queued("a", false));
    tokio::task::yield_now().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    // A new key at the cap: a has nothing in its window, but a call in flight.
    let c = tokio::spawn(queued("c", false));
    tokio::task::yield_now().await;
    assert!(
        registry().breaker("keys-queued/a").is_some(),
        "a was evicted from under its call"
    );
    z.abort();
    assert!(a.await.unwrap().is_ok());
    assert_eq!(
        registry()
            .breaker("keys-queued/a")
            .map(|b| b.metrics().succeeded),
        Some(1),
        "its call ended on the listed breaker"
    );
    c.abort();
}
