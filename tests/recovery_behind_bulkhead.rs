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
