//! Issue 2 and 7: trials and permits under refusals, concurrency and a mixed load.

use super::state_machine::{release, stampede, Stampede};
use super::*;

#[tokio::test(start_paused = true)]
async fn a_trial_refused_by_a_full_bulkhead_gives_its_slot_back() {
    let b = Breaker::builder("oe-trial-full")
        .window_calls(2)
        .min_calls(2)
        .open_for(secs(1))
        .half_open_calls(1)
        .build()
        .unwrap();
    let pool = Bulkhead::builder("oe-trial-full").pool(1).build().unwrap();
    for _ in 0..2 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    advance(secs(1)).await;
    let permit = pool.acquire().await.unwrap();
    let r = b.call_in(&pool, async { Ok::<(), DepError>(()) }).await;
    assert!(
        matches!(r, Err(Error::Rejected(Rejection::Full { .. }))),
        "{r:?}"
    );
    drop(permit);
    // The trial never ran: the next caller is the trial, and it closes the breaker.
    let r = b.call_in(&pool, async { Ok::<(), DepError>(()) }).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_half_open_share_lets_no_stampede_through() {
    let b = Breaker::builder("oe-share-stampede")
        .window_calls(2)
        .min_calls(2)
        .open_for(ms(100))
        .half_open_pct(5)
        .half_open_window(secs(30))
        .build()
        .unwrap();
    let Stampede {
        entered,
        gate,
        tasks,
    } = stampede(&b, 200).await;
    while b.metrics().rejected + u64::from(entered.load(SeqCst)) < 200 {
        tokio::task::yield_now().await;
    }
    let n = entered.load(SeqCst);
    assert!(
        (1..=10).contains(&n),
        "5 % of 200 concurrent callers, got {n}"
    );
    release(&gate, &tasks).await;
}

#[breaker(name = "oe-static-site", window_calls = 2, min_calls = 2)]
pub(crate) async fn static_site() -> Result<(), DepError> {
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_scope_sees_its_own_breaker_at_a_call_site_already_cached_outside() {
    static_site().await.unwrap();
    let global = registry().breaker("oe-static-site").unwrap();
    global.force_open();
    {
        let _scope = fusebox::testing::scope();
        assert_eq!(static_site().await, Ok(()), "the scope's breaker is fresh");
        fusebox::testing::assert_calls("oe-static-site", 1, 0, 0);
    }
    assert!(
        matches!(static_site().await, Err(DepError::Refused(_))),
        "outside again"
    );
    assert_eq!(
        global.metrics().succeeded,
        1,
        "the scope's call was not the global's"
    );
    global.reset();
}

#[derive(Clone, Copy)]
enum Act {
    Ok,
    Fail,
    Slow,
    Cancel,
    Panic,
}

#[breaker(name = "oe-mix", timeout = "50ms", window_calls = 1000, failure_rate = 100,
          fallback = mix_fallback)]
#[bulkhead(name = "oe-mix-pool", pool = 16)]
async fn mixed(act: Act) -> Result<u32, DepError> {
    tokio::task::yield_now().await;
    match act {
        Act::Ok => Ok(1),
        Act::Fail => Err(DepError::Down),
        Act::Slow => {
            tokio::time::sleep(ms(100)).await;
            Ok(1)
        }
        Act::Cancel => {
            tokio::time::sleep(ms(20)).await;
            Ok(1)
        }
        Act::Panic => panic!("the client panicked"),
    }
}

fn mix_fallback(_: Error<DepError>) -> Result<u32, DepError> {
    Ok(0)
}

#[tokio::test(start_paused = true)]
async fn a_mixed_load_is_counted_exactly_and_leaves_no_permit_behind() {
    let acts = [
        Act::Ok,
        Act::Fail,
        Act::Slow,
        Act::Cancel,
        Act::Panic,
        Act::Ok,
        Act::Ok,
    ];
    let mut made = [0u64; 5];
    let mut tasks = Vec::new();
    for i in 0..3000usize {
        let act = acts[(i * 7 + i / 3) % acts.len()];
        made[act as usize] += 1;
        tasks.push(tokio::spawn(async move {
            match act {
                Act::Cancel => {
                    let _ = tokio::time::timeout(ms(10), mixed(act)).await;
                }
                _ => {
                    let _ = mixed(act).await;
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    let m = registry().breaker("oe-mix").unwrap().metrics();
    let pool = registry().bulkhead("oe-mix-pool").unwrap();
    assert_eq!(pool.in_flight(), 0, "no permit leaked");
    assert_eq!(m.calls, 3000, "{m:?}");
    assert_eq!(
        m.succeeded
            + m.failed
            + m.ignored
            + m.timed_out
            + m.panicked
            + m.cancelled
            + m.rejected
            + m.rejected_by_bulkhead,
        3000,
        "{m:?}"
    );
    let [_, fail, _, _, panic] = made;
    assert!(m.failed <= fail && m.panicked <= panic, "{m:?} {made:?}");
    assert_eq!(
        m.state,
        State::Closed,
        "failure_rate 100 never opens on a mix"
    );
}
