//! `#[bulkhead]` alone and together with `#[breaker]`, on a paused clock.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::DepError;
use fusebox::{breaker, bulkhead, registry, Rejection, State};
use tokio::sync::Semaphore;

/// Holds a slot until `gate` gives it a permit.
#[bulkhead(pool = 2, name = "attr-pool")]
async fn held(gate: Arc<Semaphore>) -> Result<(), DepError> {
    let _ = gate.acquire().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_bulkhead_rejects_beyond_its_pool() {
    let gate = Arc::new(Semaphore::new(0));
    let a = tokio::spawn(held(gate.clone()));
    let b = tokio::spawn(held(gate.clone()));
    tokio::task::yield_now().await;
    let pool = registry().bulkhead("attr-pool").unwrap();
    assert_eq!(pool.in_flight(), 2);
    match held(gate.clone()).await {
        Err(DepError::Unavailable(Rejection::Full { name, pool })) => {
            assert_eq!((&*name, pool), ("attr-pool", 2));
        }
        other => panic!("expected Full, got {other:?}"),
    }
    gate.add_permits(2);
    a.await.unwrap().unwrap();
    b.await.unwrap().unwrap();
    assert_eq!(pool.in_flight(), 0);
    assert_eq!(pool.metrics().rejected, 1);
    gate.add_permits(1);
    held(gate).await.unwrap();
}

#[bulkhead(pool = 1, max_wait = "50ms", name = "attr-wait")]
async fn briefly(hold: Duration) -> Result<(), DepError> {
    tokio::time::sleep(hold).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn max_wait_lets_a_call_wait_for_a_slot() {
    let first = tokio::spawn(briefly(Duration::from_millis(30)));
    tokio::task::yield_now().await;
    // The slot frees after 30 ms, within the 50 ms the second call may wait.
    briefly(Duration::ZERO).await.unwrap();
    first.await.unwrap().unwrap();
    let first = tokio::spawn(briefly(Duration::from_millis(200)));
    tokio::task::yield_now().await;
    let r = briefly(Duration::ZERO).await;
    assert!(matches!(
        r,
        Err(DepError::Unavailable(Rejection::Full { .. }))
    ));
    first.await.unwrap().unwrap();
}

#[breaker(name = "attr-both", window_calls = 2)]
#[bulkhead(pool = 1, name = "attr-both")]
async fn guarded(gate: Arc<Semaphore>) -> Result<(), DepError> {
    let _ = gate.acquire().await;
    Ok(())
}

#[bulkhead(pool = 1, name = "attr-both-reversed")]
#[breaker(name = "attr-both-reversed", window_calls = 2)]
async fn guarded_reversed(gate: Arc<Semaphore>) -> Result<(), DepError> {
    let _ = gate.acquire().await;
    Ok(())
}

/// Breaker admission, then bulkhead permit, whichever attribute is written first.
#[tokio::test(start_paused = true)]
async fn breaker_then_bulkhead_in_either_order() {
    for (name, reversed) in [("attr-both", false), ("attr-both-reversed", true)] {
        let call = |gate: Arc<Semaphore>| async move {
            if reversed {
                guarded_reversed(gate).await
            } else {
                guarded(gate).await
            }
        };
        let gate = Arc::new(Semaphore::new(0));
        let holder = tokio::spawn(call(gate.clone()));
        tokio::task::yield_now().await;
        // A full bulkhead is not the dependency failing: the breaker stays closed.
        for _ in 0..3 {
            let r = call(gate.clone()).await;
            assert!(
                matches!(r, Err(DepError::Unavailable(Rejection::Full { .. }))),
                "{r:?}"
            );
        }
        let b = registry().breaker(name).unwrap();
        assert_eq!(b.state(), State::Closed);
        assert_eq!(b.metrics().rejected_by_bulkhead, 3);
        gate.add_permits(1);
        holder.await.unwrap().unwrap();
        // An open breaker rejects before the bulkhead: no permit is taken.
        b.force_open();
        let admitted = registry().bulkhead(name).unwrap().metrics().admitted;
        assert!(call(gate.clone()).await.unwrap_err().is_open());
        assert_eq!(
            registry().bulkhead(name).unwrap().metrics().admitted,
            admitted
        );
    }
}
