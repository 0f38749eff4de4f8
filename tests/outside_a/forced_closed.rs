//! Issue 31: forced closed, recording or not as the operator chose.

use super::*;

#[tokio::test(start_paused = true)]
async fn forced_closed_records_or_not_as_the_operator_chose() {
    let b = Breaker::builder("oa-forced")
        .window_calls(4)
        .min_calls(4)
        .build()
        .unwrap();
    let fail = || b.call(async { Err::<(), _>(ApiError::Down) });
    b.force_close();
    for _ in 0..4 {
        fail().await.unwrap_err();
    }
    let m = b.metrics();
    assert_eq!(
        (m.state, m.recording, m.window_calls),
        (State::ForcedClosed, true, 4)
    );
    assert!(fusebox::metrics::prometheus().contains("oa-forced"));

    b.reset();
    b.force_close_unrecorded();
    for _ in 0..4 {
        fail().await.unwrap_err();
    }
    let m = b.metrics();
    assert_eq!(
        (m.state, m.recording, m.window_calls),
        (State::ForcedClosed, false, 0)
    );
    assert_eq!(m.failed, 8, "counted all the same");
    b.reset();
    // Nothing from the unrecorded period is judged once released.
    for _ in 0..3 {
        fail().await.unwrap_err();
    }
    assert_eq!(b.state(), State::Closed);
}
