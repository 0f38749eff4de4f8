//! On the real clock, a success that answered at once is recorded under a lease on the
//! coarse clock (`runtime/src/clock/coarse.rs`) rather than by an exact read: the window must
//! still hold the calls of its last window of real time, to within the coarse clock's margin
//! at the edges. Bounded real time (about 1.5 s); nothing in this binary pauses a clock (one
//! paused clock turns leases off for the process).

use std::time::{Duration, Instant};

use fusebox_runtime::{Breaker, Error};

async fn ok_now(b: &Breaker) -> Result<(), Error<&'static str>> {
    b.call(async { Ok(()) }).await
}

/// A second of window (ten 100 ms slots): each slot's lease ends a few ms before the slot.
const WINDOW: Duration = Duration::from_millis(1000);
const SLOT: Duration = Duration::from_millis(100);
/// The window's slots count from its first call, which begins within this of the test's
/// origin; a call is counted in the slot of some instant between its start and its end.
const EDGE: Duration = Duration::from_millis(3);

#[test]
fn the_window_holds_the_last_second_of_real_time_calls() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let b = Breaker::builder("coarse-lease-real")
        .window(WINDOW)
        .min_calls(1_000_000)
        .build_detached()
        .unwrap();
    let slot_of = |t: Duration| (t.as_nanos() / SLOT.as_nanos()) as u32;
    rt.block_on(async {
        let origin = Instant::now();
        // (start, end) of every call, from the origin.
        let mut calls: Vec<(Duration, Duration)> = Vec::new();
        let mut checks = 0;
        while origin.elapsed() < Duration::from_millis(1500) {
            let start = origin.elapsed();
            ok_now(&b).await.unwrap();
            calls.push((start, origin.elapsed()));
            if calls.len() % 25 == 0 {
                let before = origin.elapsed();
                let seen = b.metrics().window_calls;
                let after = origin.elapsed();
                if slot_of(before) != slot_of(after + EDGE)
                    || slot_of(before) != slot_of(before.saturating_sub(EDGE))
                {
                    continue; // read across a slot's edge: either count would be right
                }
                // The oldest slot still in the window starts here.
                let from = SLOT * slot_of(before).saturating_sub(9);
                let surely = calls.iter().filter(|(s, _)| *s >= from + EDGE).count() as u64;
                let maybe = calls.iter().filter(|(_, e)| *e + EDGE >= from).count() as u64;
                assert!(
                    (surely..=maybe).contains(&seen),
                    "at {before:?}: the window holds {seen} calls, expected {surely}..={maybe}"
                );
                checks += 1;
            }
            // A call every ~0.2 ms: every slot's edge is crossed by many.
            std::thread::sleep(Duration::from_micros(200));
        }
        assert!(checks > 20, "only {checks} checks");
    });
}
