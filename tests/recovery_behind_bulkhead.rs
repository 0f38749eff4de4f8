//! A probe is not kept out by the breaker's own earlier probes filling its bulkhead.
//!
//! While a breaker is open, only its probes enter its bulkhead. In seed 002's shape (answers
//! from 80 ms to 8 s), a probe started just before the dependency healed held the pool's slot
//! for 8 s (an adaptive limit the outage shrank to one, or a small fixed pool), and every later
//! probe was refused `Full` (given back, so every caller was refused) until it ended: out of
//! `Open` 10 s after healing behind `#[bulkhead(limit = "adaptive")]`, 1 s without it (a
//! review's real run, 3 of 3). A pool full of other calls still refuses a probe
//! (`tests/outside_l/probes.rs`).

mod common;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use common::DepError;
use fusebox::{breaker, bulkhead, registry, State};
use tokio::time::advance;

static LATENCY_MS: AtomicU64 = AtomicU64::new(0);

#[breaker(
    name = "rbb-probes",
    window_calls = 2,
    min_calls = 2,
    open_for = "60s",
    probe_every = "1s",
    half_open_calls = 1
)]
#[bulkhead(name = "rbb-probes-pool", pool = 1)]
async fn payment(fail: bool) -> Result<u32, DepError> {
    tokio::time::sleep(Duration::from_millis(LATENCY_MS.load(Relaxed))).await;
    if fail {
        Err(DepError::Down)
    } else {
        Ok(1)
    }
}

#[tokio::test(start_paused = true)]
async fn a_probe_is_not_refused_by_a_pool_its_earlier_probe_fills() {
    for _ in 0..2 {
        assert!(payment(true).await.is_err());
    }
    let b = registry().breaker("rbb-probes").unwrap();
    let pool = registry().bulkhead("rbb-probes-pool").unwrap();
    assert_eq!(b.state(), State::Open);
    // The dependency is slow: the first probe takes the pool's one slot for 8 s.
    LATENCY_MS.store(8_000, Relaxed);
    advance(Duration::from_millis(1_001)).await;
    let first = tokio::spawn(payment(false));
    tokio::task::yield_now().await;
    assert_eq!(pool.in_flight(), 1, "the first probe holds the slot");
    // It heals: the next probe is due a second later and answers at once.
    LATENCY_MS.store(0, Relaxed);
    advance(Duration::from_millis(1_000)).await;
    assert_eq!(
        payment(false).await.ok(),
        Some(1),
        "the second probe went through"
    );
    assert_ne!(
        b.state(),
        State::Open,
        "the passed probe ended the open period"
    );
    assert_eq!(
        pool.in_flight(),
        1,
        "it took no slot: the first probe still holds it"
    );
    first.abort();
}

static IN_QUEUED: AtomicU64 = AtomicU64::new(0);

#[breaker(
    name = "rbb-queued",
    window_calls = 2,
    min_calls = 2,
    open_for = "60s",
    probe_every = "1s",
    half_open_calls = 1
)]
#[bulkhead(name = "rbb-queued-pool", pool = 1, max_wait = "5s")]
async fn queued(fail: bool) -> Result<u32, DepError> {
    if fail {
        return Err(DepError::Down);
    }
    // Counted while it runs: it hangs, so a probe that got past the pool stays counted.
    IN_QUEUED.fetch_add(1, Relaxed);
    std::future::pending::<()>().await;
    Ok(1)
}

#[bulkhead(name = "rbb-queued-pool", pool = 1, max_wait = "5s")]
async fn other_call() -> Result<u32, DepError> {
    std::future::pending::<()>().await;
    Ok(0)
}

#[tokio::test(start_paused = true)]
async fn a_probe_queued_for_a_slot_lets_no_later_probe_past_a_pool_of_other_calls() {
    for _ in 0..2 {
        assert!(queued(true).await.is_err());
    }
    let other = tokio::spawn(other_call());
    tokio::task::yield_now().await;
    // The first probe finds the pool full of another call: it queues (`max_wait`).
    advance(Duration::from_millis(1_001)).await;
    let first = tokio::spawn(queued(false));
    tokio::task::yield_now().await;
    // The second finds the same: no probe holds a slot, so it queues too.
    advance(Duration::from_millis(1_000)).await;
    let second = tokio::spawn(queued(false));
    tokio::task::yield_now().await;
    tokio::task::yield_now().await;
    assert_eq!(
        IN_QUEUED.load(Relaxed),
        0,
        "no probe ran past the other call's slot"
    );
    let pool = registry().bulkhead("rbb-queued-pool").unwrap();
    assert_eq!(pool.in_flight(), 1);
    for t in [first, second, other] {
        t.abort();
    }
}

#[breaker(
    name = "rbb-two-pools",
    window_calls = 2,
    min_calls = 2,
    open_for = "60s",
    probe_every = "1s",
    half_open_calls = 1
)]
#[bulkhead(name = "rbb-pool-a", pool = 1)]
async fn through_a(fail: bool) -> Result<u32, DepError> {
    if fail {
        return Err(DepError::Down);
    }
    // A probe that hangs, holding pool A's slot.
    std::future::pending::<()>().await;
    Ok(1)
}

#[breaker(
    name = "rbb-two-pools",
    window_calls = 2,
    min_calls = 2,
    open_for = "60s",
    probe_every = "1s",
    half_open_calls = 1
)]
#[bulkhead(name = "rbb-pool-b", pool = 1)]
async fn through_b() -> Result<u32, DepError> {
    Ok(1)
}

#[bulkhead(name = "rbb-pool-b", pool = 1)]
async fn holds_b() -> Result<u32, DepError> {
    std::future::pending::<()>().await;
    Ok(0)
}

#[tokio::test(start_paused = true)]
async fn a_probe_in_one_pool_does_not_open_another_full_pool() {
    for _ in 0..2 {
        assert!(through_a(true).await.is_err());
    }
    let other = tokio::spawn(holds_b());
    tokio::task::yield_now().await;
    advance(Duration::from_millis(1_001)).await;
    // A probe holds pool A's slot: it is no reason to pass pool B, full of another call.
    let first = tokio::spawn(through_a(false));
    tokio::task::yield_now().await;
    assert_eq!(registry().bulkhead("rbb-pool-a").unwrap().in_flight(), 1);
    advance(Duration::from_millis(1_000)).await;
    let r = through_b().await;
    assert!(
        matches!(
            r,
            Err(DepError::Unavailable(fusebox::Rejection::Full { .. }))
        ),
        "{r:?}"
    );
    first.abort();
    other.abort();
}

static KEYED_RUNNING: AtomicU64 = AtomicU64::new(0);

#[breaker(
    name = "rbb-keyed",
    key = host,
    window_calls = 2,
    min_calls = 2,
    open_for = "600s",
    probe_every = "1s",
    half_open_calls = 1
)]
#[bulkhead(name = "rbb-keyed-pool", pool = 1)]
async fn per_host(host: &str, fail: bool) -> Result<u32, DepError> {
    let _ = host;
    if fail {
        return Err(DepError::Down);
    }
    KEYED_RUNNING.fetch_add(1, Relaxed);
    std::future::pending::<()>().await;
    Ok(1)
}

#[tokio::test(start_paused = true)]
async fn another_keys_probe_in_the_pool_lets_no_probe_past_it() {
    let hosts = ["a", "b", "c", "d", "e"];
    for h in hosts {
        for _ in 0..2 {
            assert!(per_host(h, true).await.is_err());
        }
    }
    advance(Duration::from_millis(1_001)).await;
    // One probe per open key, through one shared pool of one slot: only the first runs.
    let mut probes = Vec::new();
    for h in hosts {
        probes.push(tokio::spawn(per_host(h, false)));
        for _ in 0..5 {
            tokio::task::yield_now().await;
        }
    }
    let running = KEYED_RUNNING.load(Relaxed);
    for p in probes {
        p.abort();
    }
    assert_eq!(
        running, 1,
        "one probe holds the slot; the other keys' are refused"
    );
}
