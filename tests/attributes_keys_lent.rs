//! Integer keys (`key = shard`): a warm key's breaker is lent to a call's first poll, and kept
//! only by a call that goes on past it. Whatever path a call takes, it is recorded on its key's
//! breaker, refused while that breaker is open, and a panic in it counts once.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use fusebox::{breaker, registry, Breaker, Rejection, State};

#[derive(Debug, PartialEq)]
enum ShardError {
    Down,
    Refused(Rejection),
}

impl From<Rejection> for ShardError {
    fn from(r: Rejection) -> Self {
        ShardError::Refused(r)
    }
}

/// Answers in its first poll, or after `wait` when it is not zero.
#[breaker(name = "lent-shard", key = shard, window_calls = 4, min_calls = 4, open_for = "30s")]
async fn shard_call(shard: u64, fail: bool, wait: Duration) -> Result<u64, ShardError> {
    if !wait.is_zero() {
        tokio::time::sleep(wait).await;
    }
    if fail {
        Err(ShardError::Down)
    } else {
        Ok(shard)
    }
}

fn breaker_of(name: &str) -> Breaker {
    registry().breaker(name).expect("made by its first call")
}

#[tokio::test(start_paused = true)]
async fn a_call_that_waits_is_recorded_on_its_key_even_when_the_key_is_evicted_meanwhile() {
    // Warm: the key is taken in by this thread's recent keys on its second call.
    for _ in 0..3 {
        assert_eq!(shard_call(1, false, Duration::ZERO).await, Ok(1));
    }
    let before = breaker_of("lent-shard/1");
    assert_eq!(before.metrics().succeeded, 3);
    let waiting = tokio::spawn(shard_call(1, false, Duration::from_secs(1)));
    tokio::time::sleep(Duration::from_millis(10)).await;
    // Removed while the call waits: the call keeps the breaker it started on.
    assert!(registry().evict("lent-shard/1"));
    assert_eq!(waiting.await.expect("no panic"), Ok(1));
    assert_eq!(before.metrics().succeeded, 4, "recorded where it started");
    // The next call makes a fresh breaker, not the remembered one.
    assert_eq!(shard_call(1, false, Duration::ZERO).await, Ok(1));
    let after = breaker_of("lent-shard/1");
    assert!(!after.ptr_eq(&before));
    assert_eq!(after.metrics().succeeded, 1);
    assert_eq!(before.metrics().succeeded, 4);
}

#[tokio::test(start_paused = true)]
async fn failures_in_first_polls_and_in_waits_open_the_key_and_it_refuses_without_running() {
    for _ in 0..3 {
        assert_eq!(shard_call(2, false, Duration::ZERO).await, Ok(2));
    }
    // A failure after a wait, then one at once: half of a window of four (the default rate).
    for wait in [50, 0] {
        let r = shard_call(2, true, Duration::from_millis(wait)).await;
        assert_eq!(r, Err(ShardError::Down));
    }
    let b = breaker_of("lent-shard/2");
    assert_eq!(b.state(), State::Open);
    for _ in 0..3 {
        match shard_call(2, false, Duration::from_secs(3600)).await {
            Err(ShardError::Refused(r)) => assert_eq!(r.name(), "lent-shard/2"),
            other => panic!("refused at once, not {other:?}"),
        }
    }
    let m = b.metrics();
    assert_eq!((m.succeeded, m.failed, m.rejected), (3, 2, 3));
    // Another key is not affected.
    assert_eq!(shard_call(3, false, Duration::ZERO).await, Ok(3));
}

static PANIC: AtomicBool = AtomicBool::new(false);

#[breaker(name = "lent-panics", key = shard)]
async fn may_panic(shard: i64) -> Result<i64, ShardError> {
    if PANIC.load(SeqCst) {
        panic!("the dependency's client panicked");
    }
    Ok(shard)
}

#[test]
fn a_panic_in_a_lent_first_poll_counts_once_and_the_call_is_not_run_again() {
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..3 {
        let mut call = pin!(may_panic(-4));
        assert_eq!(call.as_mut().poll(&mut cx), Poll::Ready(Ok(-4)));
    }
    PANIC.store(true, SeqCst);
    let mut call = Box::pin(may_panic(-4));
    let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = call.as_mut().poll(&mut cx);
    }));
    assert!(first.is_err(), "the call's own panic");
    let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = call.as_mut().poll(&mut cx);
    }));
    assert!(
        again.is_err(),
        "polled again after its panic: never run twice"
    );
    drop(call);
    PANIC.store(false, SeqCst);
    let m = breaker_of("lent-panics/-4").metrics();
    assert_eq!(
        (m.succeeded, m.panicked, m.failed),
        (3, 1, 0),
        "a panic is a failure of its own kind"
    );
    assert_eq!(m.window_calls, 4);
}

/// An inner keyed call made inside an outer one's first poll.
#[breaker(name = "lent-inner", key = shard)]
async fn inner(shard: u64) -> Result<u64, ShardError> {
    Ok(shard * 10)
}

#[breaker(name = "lent-outer", key = tenant)]
async fn outer(tenant: u64, shard: u64) -> Result<u64, ShardError> {
    let v = inner(shard).await?;
    Ok(v + tenant)
}

#[tokio::test(start_paused = true)]
async fn keyed_calls_inside_keyed_calls_each_go_to_their_own_key() {
    for round in 0..50u64 {
        for tenant in 0..4 {
            let shard = (tenant + round) % 3;
            assert_eq!(outer(tenant, shard).await, Ok(shard * 10 + tenant));
        }
    }
    let outer_calls: u64 = (0..4)
        .map(|t| breaker_of(&format!("lent-outer/{t}")).metrics().succeeded)
        .sum();
    let inner_calls: u64 = (0..3)
        .map(|s| breaker_of(&format!("lent-inner/{s}")).metrics().succeeded)
        .sum();
    assert_eq!((outer_calls, inner_calls), (200, 200));
    // Removed inner keys are made again, not answered from this thread's memory.
    let old = breaker_of("lent-inner/1");
    assert!(registry().evict("lent-inner/1"));
    assert_eq!(outer(0, 1).await, Ok(10));
    let fresh = breaker_of("lent-inner/1");
    assert!(!fresh.ptr_eq(&old));
    assert_eq!(fresh.metrics().succeeded, 1);
}

#[tokio::test(start_paused = true)]
async fn a_forced_open_key_refuses_its_lent_calls() {
    for _ in 0..3 {
        assert_eq!(shard_call(7, false, Duration::ZERO).await, Ok(7));
    }
    let b = breaker_of("lent-shard/7");
    b.force_open();
    match shard_call(7, false, Duration::ZERO).await {
        Err(ShardError::Refused(r)) => assert_eq!(r.name(), "lent-shard/7"),
        other => panic!("refused, not {other:?}"),
    }
    b.force_close();
    assert_eq!(shard_call(7, false, Duration::ZERO).await, Ok(7));
}

/// `stale_for` with an integer key: the stale cache names the call's breaker after the call.
#[breaker(name = "lent-stale", key = shard, stale_for = "10m")]
async fn stale_shard(shard: u64, evict: bool) -> Result<u64, ShardError> {
    if evict {
        // Removed while the call runs (a sweep, an operator's `evict`).
        assert!(registry().evict(&format!("lent-stale/{shard}")));
    }
    Ok(shard)
}

#[tokio::test(start_paused = true)]
async fn with_stale_for_the_breaker_the_call_ran_on_keeps_its_value_even_if_evicted_meanwhile() {
    for _ in 0..3 {
        assert_eq!(stale_shard(5, false).await, Ok(5));
    }
    assert_eq!(stale_shard(5, true).await, Ok(5));
    assert!(
        registry().breaker("lent-stale/5").is_none(),
        "the answer is kept on the breaker the call ran on, not on a key made again"
    );
    assert_eq!(stale_shard(5, false).await, Ok(5));
    assert!(
        registry().breaker("lent-stale/5").is_some(),
        "the next call makes it again"
    );
}
