//! A breaker's clock does not depend on which runtime touched the registry first.
//!
//! Every `#[tokio::test(start_paused = true)]` has a runtime and a frozen clock of its own, each
//! starting at the real instant it was built. The annotated breakers are made on the registry's
//! first use; their time base must lie behind every runtime's clock, or a test whose runtime is
//! older than that first use sees its open periods end late.

mod common;

use std::time::Duration;

use common::DepError;
use fusebox::{breaker, registry, State};
use tokio::runtime::{Builder, Runtime};
use tokio::time::advance;

#[breaker(
    name = "clock-base",
    failure_rate = 50,
    window_calls = 4,
    min_calls = 4,
    open_for = "5s",
    half_open_calls = 1
)]
async fn dependency(up: bool) -> Result<u32, DepError> {
    if up {
        Ok(1)
    } else {
        Err(DepError::Down)
    }
}

fn paused_runtime() -> Runtime {
    Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime")
}

#[test]
fn an_older_runtime_sees_open_for_end_on_time_when_a_younger_one_made_the_breakers() {
    let older = paused_runtime();
    // Real time passes between the two runtimes' creation (this is not waiting for an event:
    // the gap between the two frozen clocks is the condition under test).
    std::thread::sleep(Duration::from_millis(50));
    let younger = paused_runtime();
    // The registry's first use, which makes every annotated breaker, happens on the younger one.
    younger.block_on(async {
        assert_eq!(
            registry().breaker("clock-base").unwrap().state(),
            State::Closed
        );
    });
    older.block_on(async {
        for _ in 0..4 {
            assert!(dependency(false).await.is_err());
        }
        let b = registry().breaker("clock-base").unwrap();
        assert_eq!(b.state(), State::Open);
        // Exactly `open_for` later on this runtime's clock, the breaker lets a trial through
        // (before the fix it stayed open for the 50 ms gap between the runtimes).
        advance(Duration::from_secs(5)).await;
        assert_eq!(dependency(true).await, Ok(1));
        assert_eq!(b.state(), State::Closed);
    });
}

#[breaker(
    name = "clock-base-window",
    window = "10s",
    min_calls = 4,
    failure_rate = 50
)]
async fn windowed(up: bool) -> Result<u32, DepError> {
    if up {
        Ok(1)
    } else {
        Err(DepError::Down)
    }
}

#[test]
fn a_time_window_forgets_on_its_own_clock_when_another_test_touched_the_registry_an_hour_ahead() {
    let behind = paused_runtime();
    let ahead = paused_runtime();
    // Another test moved its clock an hour on, then made every annotated breaker.
    ahead.block_on(async {
        advance(Duration::from_secs(3600)).await;
        assert_eq!(
            registry().breaker("clock-base-window").unwrap().state(),
            State::Closed
        );
    });
    behind.block_on(async {
        for _ in 0..3 {
            assert!(windowed(false).await.is_err());
        }
        // The three failures leave the 10 s window; before the fix its slots counted from the
        // other clock's hour, so on this one every call stayed in its first slot.
        advance(Duration::from_secs(11)).await;
        assert!(windowed(false).await.is_err());
        for _ in 0..3 {
            assert_eq!(windowed(true).await, Ok(1));
        }
        let b = registry().breaker("clock-base-window").unwrap();
        assert_eq!(b.metrics().window_calls, 4, "{:?}", b.metrics());
        assert_eq!(b.state(), State::Closed, "1 failure in 4 is under 50 %");
    });
}
