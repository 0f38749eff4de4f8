//! The coarse clock (`runtime/src/clock/coarse.rs`) is never read for a paused runtime: a
//! breaker whose successes were recorded on the real clock (by the coarse one) a moment ago,
//! by another thread, records those of a paused runtime in the slots of its virtual time.
//!
//! One test in this file, run in phases: a paused clock turns the coarse clock off for the
//! whole process, so nothing may run beside it (phase one would not use the coarse clock).

mod common;
use common::*;

use std::time::Duration;

use fusebox_runtime::{Breaker, Error, Rejection, State};
use tokio::runtime::Builder;
use tokio::time::advance;

async fn ok_now(b: &Breaker) -> Result<(), Error<&'static str>> {
    b.call(async { Ok(()) }).await
}

async fn fail_now(b: &Breaker) -> Result<(), Error<&'static str>> {
    b.call(async { Err("boom") }).await
}

#[test]
fn a_paused_runtime_records_by_its_own_clock_right_after_a_real_one() {
    // 30 s window of 3 s slots; trips at 50 % of at least 10 calls; open 10 s.
    let x = Breaker::builder("coarse-clock-x")
        .window(secs(30))
        .min_calls(10)
        .failure_rate(50)
        .open_for(secs(10))
        .build_detached()
        .unwrap();

    // Phase one, real time, on a thread of its own: successes that answer at once, recorded
    // by the coarse clock.
    std::thread::scope(|s| {
        s.spawn(|| {
            let real = Builder::new_current_thread().enable_time().build().unwrap();
            real.block_on(async {
                ok_now(&x).await.unwrap();
                // The coarse clock lags by a few ms: the calls right after the window's
                // first one read the exact clock. Real time for it to be read.
                std::thread::sleep(Duration::from_millis(40));
                for _ in 0..2 {
                    ok_now(&x).await.unwrap();
                }
            });
        });
    });
    assert_eq!(x.metrics().window_calls, 3);

    // Phase two, a paused clock, a moment of real time later, in the same 3 s slot.
    let paused = Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    paused.block_on(async {
        // Real time passes, virtual time does not: a coarse reading would be ahead of it.
        std::thread::sleep(Duration::from_millis(40));
        advance(secs(27)).await;
        for _ in 0..5 {
            ok_now(&x).await.unwrap();
        }
        // 32 s after phase one: its slot left the window; the five successes (at 27 s) stay.
        // Put in a slot by the real (coarse) clock, they would have joined phase one's slot
        // and left with it.
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

        // The open period ends on the virtual clock: 10 s of it, while real time moves by
        // 40 ms. Refused on the coarse (real) clock, the call would meet a period still on.
        std::thread::sleep(Duration::from_millis(40));
        advance(secs(10)).await;
        let r = ok_now(&x).await;
        assert!(
            !matches!(
                r,
                Err(Error::Rejected(Rejection::Open {
                    state: State::Open,
                    ..
                }))
            ),
            "the period ended: not refused as open, got {r:?}"
        );
    });
}
