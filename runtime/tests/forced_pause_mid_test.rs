//! A test that pauses its clock mid-way (`tokio::time::pause()`), after its breaker was used on
//! the real clock, and advances it past a timed force: let in at once, as on the exact clock.
//! The coarse clock (`runtime/src/clock/coarse.rs`) notices a pause only at its next tick, so
//! the forced-open fast path must not judge a force that lapses. A binary of its own: a paused
//! clock seen anywhere in the process turns the coarse clock off, and this test needs it on
//! when it starts. (Found by a review of the forced-open fast path: refused 1 s past the lapse.)

use std::time::Duration;

use fusebox_runtime::{Breaker, Error, Rejection, State};

async fn once(b: &Breaker) -> Result<u32, Error<&'static str>> {
    b.call(async { Ok::<u32, &'static str>(7) }).await
}

#[tokio::test]
async fn a_timed_force_lapses_at_once_when_a_paused_clock_is_advanced_past_it() {
    let b = Breaker::builder("forced-pause-mid")
        .build_detached()
        .unwrap();
    b.force_open_for(Duration::from_secs(10));
    // Refused on the real clock first: this thread's clock is checked and found real.
    assert!(matches!(
        once(&b).await,
        Err(Error::Rejected(Rejection::Open {
            state: State::ForcedOpen,
            retry_in: Some(_),
            ..
        }))
    ));
    tokio::time::pause();
    tokio::time::advance(Duration::from_secs(11)).await;
    let r = once(&b).await;
    assert_eq!(
        r,
        Ok(7),
        "refused 1 s after the force lapsed: state {:?}",
        b.state()
    );
}
