//! Leases on the coarse clock (`runtime/src/clock/coarse.rs`) are off for the rest of the
//! process once a paused clock was seen anywhere: a breaker that took a lease on the real
//! clock records, on a paused runtime, each success in the slot of its virtual time.
//!
//! One test in this file, run in phases: the switch is process-wide, so nothing may run
//! beside it (another test's paused clock would turn leases off before phase one).

mod common;
use common::*;

use fusebox_runtime::{Breaker, Error, State};
use tokio::runtime::Builder;
use tokio::time::advance;

async fn ok_now(b: &Breaker) -> Result<(), Error<&'static str>> {
    b.call(async { Ok(()) }).await
}

async fn fail_now(b: &Breaker) -> Result<(), Error<&'static str>> {
    b.call(async { Err("boom") }).await
}

#[test]
fn a_breaker_leased_on_the_real_clock_records_exactly_once_a_paused_clock_was_seen() {
    // 30 s window of 3 s slots; trips at 50 % of at least 10 calls.
    let x = Breaker::builder("coarse-lease-x")
        .window(secs(30))
        .min_calls(10)
        .failure_rate(50)
        .build_detached()
        .unwrap();

    // Phase one, real time: successes that answer at once; the head slot gets a lease that
    // lasts for the rest of the slot (about 3 s of real time).
    let real = Builder::new_current_thread().enable_time().build().unwrap();
    real.block_on(async {
        for _ in 0..3 {
            ok_now(&x).await.unwrap();
        }
    });
    assert_eq!(x.metrics().window_calls, 3);

    // Phase two, a paused clock, milliseconds of real time later: the lease would still hold.
    let paused = Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    paused.block_on(async {
        // Another breaker's first success reads the exact clock and sees it stand still.
        let y = Breaker::builder("coarse-lease-y").build_detached().unwrap();
        ok_now(&y).await.unwrap();

        advance(secs(27)).await;
        for _ in 0..5 {
            ok_now(&x).await.unwrap();
        }
        // 32 s after phase one: its slot left the window; the five successes (at 27 s) stay.
        // Under the lease they would have joined phase one's slot and left with it.
        advance(secs(5)).await;
        assert_eq!(
            x.metrics().window_calls,
            5,
            "the successes are in the slot of their virtual time"
        );
        for _ in 0..5 {
            fail_now(&x).await.unwrap_err();
        }
        assert_eq!(x.state(), State::Open, "5 failures of 10 calls");
    });
}
