//! Guards release on drop: cancellation and panics free slots; half-open never stampedes.

mod common;
use common::*;

use std::sync::Arc;
use std::time::Duration;

use fusebox_runtime::{Breaker, Bulkhead, Error, Rejection, State};
use tokio::sync::Barrier;
use tokio::time::{advance, sleep, timeout};

async fn open(b: &Breaker) {
    while b.state() == State::Closed {
        let _ = fail(b, MS).await;
    }
}

#[tokio::test(start_paused = true)]
async fn half_open_under_100_concurrent_callers_admits_no_more_than_its_cap() {
    let b = Breaker::builder("rel-stampede-calls")
        .window_calls(2)
        .half_open_calls(3)
        .build()
        .unwrap();
    open(&b).await;
    advance(secs(30)).await;
    let start = Arc::new(Barrier::new(100));
    let calls: Vec<_> = (0..100)
        .map(|_| {
            let (b, start) = (b.clone(), start.clone());
            tokio::spawn(async move {
                start.wait().await;
                ok(&b, secs(1)).await
            })
        })
        .collect();
    let mut admitted = 0;
    for c in calls {
        if c.await.unwrap().is_ok() {
            admitted += 1;
        }
    }
    assert_eq!(admitted, 3);
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn half_open_share_under_100_concurrent_callers_admits_its_share() {
    let b = Breaker::builder("rel-stampede-share")
        .window_calls(2)
        .half_open_pct(5)
        .build()
        .unwrap();
    open(&b).await;
    advance(secs(30)).await;
    let calls: Vec<_> = (0..100)
        .map(|_| {
            let b = b.clone();
            tokio::spawn(async move { ok(&b, secs(1)).await })
        })
        .collect();
    let mut admitted = 0;
    for c in calls {
        admitted += c.await.unwrap().is_ok() as usize;
    }
    assert_eq!(admitted, 5);
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_trial_frees_its_slot_and_is_not_a_failure() {
    let b = Breaker::builder("rel-cancel-trial")
        .window_calls(2)
        .half_open_calls(1)
        .build()
        .unwrap();
    open(&b).await;
    advance(secs(30)).await;
    // The only trial slot is taken by a call that the caller gives up on.
    assert!(timeout(secs(1), ok(&b, secs(60))).await.is_err());
    assert_eq!(b.state(), State::HalfOpen);
    assert_eq!(b.metrics().cancelled, 1);
    ok(&b, MS).await.expect("the slot was freed");
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_closed_call_is_recorded_as_cancelled() {
    let b = Breaker::builder("rel-cancel")
        .window_calls(2)
        .build()
        .unwrap();
    for _ in 0..5 {
        assert!(timeout(MS, ok(&b, secs(60))).await.is_err());
    }
    let m = b.metrics();
    assert_eq!((m.cancelled, m.failures(), m.window_calls), (5, 0, 0));
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn a_panic_is_a_failure_and_frees_the_bulkhead_and_the_trial() {
    let b = Breaker::builder("rel-panic")
        .window_calls(2)
        .half_open_calls(1)
        .build()
        .unwrap();
    let pool = Bulkhead::builder("rel-panic-pool").pool(1).build().unwrap();
    for _ in 0..2 {
        let (b, pool) = (b.clone(), pool.clone());
        let r = tokio::spawn(async move {
            b.call_in(&pool, async {
                panic!("dependency client bug") as Result<(), &str>
            })
            .await
        })
        .await;
        assert!(r.unwrap_err().is_panic());
    }
    assert_eq!(b.state(), State::Open, "two panics in two calls opened it");
    assert_eq!(b.metrics().panicked, 2);
    assert_eq!(pool.in_flight(), 0);
    advance(secs(30)).await;
    let (b2, pool2) = (b.clone(), pool.clone());
    let _ = tokio::spawn(async move {
        b2.call_in(&pool2, async { panic!("still broken") as Result<(), &str> })
            .await
    })
    .await;
    assert_eq!(
        b.state(),
        State::Open,
        "a panicking trial reopens rather than sticking"
    );
    assert_eq!(pool.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn bulkhead_rejects_when_full_and_waits_up_to_max_wait() {
    let fast = Bulkhead::builder("rel-bh-fast").pool(2).build().unwrap();
    let a = fast.acquire().await.unwrap();
    let _b = fast.acquire().await.unwrap();
    assert!(matches!(
        fast.acquire().await,
        Err(Rejection::Full { pool: 2, .. })
    ));
    drop(a);
    assert!(fast.acquire().await.is_ok());
    let m = fast.metrics();
    assert_eq!((m.pool, m.in_flight, m.peak, m.rejected), (2, 1, 2, 1));

    let waiting = Bulkhead::builder("rel-bh-wait")
        .pool(1)
        .max_wait(Duration::from_millis(100))
        .build()
        .unwrap();
    let held = waiting.acquire().await.unwrap();
    let w2 = waiting.clone();
    let waiter = tokio::spawn(async move { w2.call(async { 7 }).await });
    sleep(Duration::from_millis(50)).await;
    drop(held);
    assert_eq!(
        waiter.await.unwrap().unwrap(),
        7,
        "a slot freed within max_wait is taken"
    );
    let _held = waiting.acquire().await.unwrap();
    let started = tokio::time::Instant::now();
    assert!(waiting.call(async { 7 }).await.is_err());
    assert_eq!(started.elapsed(), Duration::from_millis(100));
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_takes_no_permit_and_a_full_bulkhead_is_no_failure() {
    let b = Breaker::builder("rel-compose")
        .window_calls(2)
        .build()
        .unwrap();
    let pool = Bulkhead::builder("rel-compose-pool")
        .pool(1)
        .build()
        .unwrap();
    let held = pool.acquire().await.unwrap();
    for _ in 0..10 {
        let r: Result<(), Error<&str>> = b.call_in(&pool, async { Ok(()) }).await;
        assert!(matches!(r, Err(Error::Rejected(Rejection::Full { .. }))));
    }
    assert_eq!(
        b.state(),
        State::Closed,
        "bulkhead rejections are not dependency failures"
    );
    assert_eq!(b.metrics().rejected_by_bulkhead, 10);
    drop(held);
    open(&b).await;
    let before = pool.metrics().admitted;
    let r: Result<(), Error<&str>> = b.call_in(&pool, async { Ok(()) }).await;
    assert!(matches!(r, Err(Error::Rejected(Rejection::Open { .. }))));
    assert_eq!(
        pool.metrics().admitted,
        before,
        "an open breaker took no permit"
    );
}
