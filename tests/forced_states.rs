//! Issue 18 item 5: forced states are no longer silent. Held past `alert_after` a forced state
//! is `stuck` (metrics, one ERROR); forced closed logs at WARN; `force_open_for` /
//! `force_close_for` lapse on the tokio clock without a timer task.

#[path = "common/log.rs"]
mod log;

use std::time::Duration;

use fusebox::{stuck_breakers, Breaker, Error, State};
use log::log;
use tokio::time::advance;
use tracing::Level;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

async fn call(b: &Breaker) -> Result<(), Error<&'static str>> {
    b.call(async { Ok(()) }).await
}

#[tokio::test(start_paused = true)]
async fn a_forced_state_held_past_alert_after_is_stuck_and_logs_one_error() {
    let log = log();
    for (name, force) in [
        ("forced-stuck-open", Breaker::force_open as fn(&Breaker)),
        ("forced-stuck-closed", Breaker::force_close),
    ] {
        let b = Breaker::builder(name)
            .alert_after(secs(60))
            .build()
            .unwrap();
        force(&b);
        advance(secs(59)).await;
        assert!(!b.metrics().stuck, "{name}: not yet");
        advance(secs(2)).await;
        for _ in 0..5 {
            let _ = call(&b).await;
            assert!(b.metrics().stuck, "{name}: held past alert_after");
        }
        assert!(stuck_breakers().iter().any(|m| m.name == name), "{name}");
        let text = fusebox::export::prometheus();
        assert!(
            text.contains(&format!("fusebox_breaker_stuck{{breaker=\"{name}\"}} 1\n")),
            "{name}"
        );
        assert_eq!(
            log.count(Level::ERROR, name, "stuck"),
            1,
            "{name}: one ERROR"
        );
        b.reset();
        assert!(!b.metrics().stuck, "{name}: a reset ends the episode");
    }
}

#[tokio::test(start_paused = true)]
async fn forcing_closed_logs_a_warning_not_closed_at_info() {
    let log = log();
    let name = "forced-closed-warn";
    let b = Breaker::builder(name).build_detached().unwrap();
    b.force_close();
    assert_eq!(log.count(Level::WARN, name, "forced closed"), 1);
    assert_eq!(log.count(Level::INFO, name, "closed"), 0);
}

#[tokio::test(start_paused = true)]
async fn a_forced_state_with_a_duration_lapses_on_the_next_admission() {
    let b = Breaker::builder("forced-for")
        .window_calls(4)
        .half_open_calls(1)
        .build_detached()
        .unwrap();
    b.force_open_for(secs(600));
    assert_eq!(b.metrics().force_expires_in, Some(secs(600)));
    advance(secs(599)).await;
    assert!(matches!(call(&b).await, Err(Error::Rejected(_))));
    advance(secs(1)).await;
    // Forced open lapses into half-open: the next caller is a trial, and its success closes.
    call(&b).await.unwrap();
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.metrics().force_expires_in, None);

    b.force_close_for(secs(60));
    assert_eq!(b.state(), State::ForcedClosed);
    advance(secs(60)).await;
    assert_eq!(
        b.metrics().state,
        State::Closed,
        "seen by a metrics snapshot"
    );

    // Without a duration a forced state is held until changed.
    b.force_open();
    advance(secs(86_400)).await;
    assert_eq!(b.state(), State::ForcedOpen);
    assert_eq!(b.metrics().force_expires_in, None);
}
