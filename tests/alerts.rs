//! Alerts: a breaker away from closed longer than `alert_after` is `stuck` in every output and
//! logs at ERROR once per stuck episode, however many calls and scrapes see it stuck.

#[path = "common/log.rs"]
mod log;

use std::time::Duration;

use fusebox::{stuck_breakers, Breaker, Error, State};
use log::log;
use tokio::time::advance;
use tracing::Level;

async fn fail(b: &Breaker) -> Result<(), Error<&'static str>> {
    b.call(async { Err("down") }).await
}

/// Everything an operator or a health check looks at, many times over.
fn look_everywhere(name: &str) -> (bool, bool, bool) {
    let mut seen = (false, false, false);
    for _ in 0..5 {
        let text = fusebox::export::prometheus();
        seen.0 = text.contains(&format!("fusebox_breaker_stuck{{breaker=\"{name}\"}} 1\n"));
        seen.1 = stuck_breakers().iter().any(|b| b.name == name);
        let snapshot = fusebox::metrics();
        let mine = snapshot.breaker(name).unwrap();
        #[cfg(feature = "serde")]
        let json_stuck = serde_json::to_value(mine).unwrap()["stuck"] == true;
        #[cfg(not(feature = "serde"))]
        let json_stuck = mine.stuck;
        seen.2 = json_stuck;
    }
    seen
}

#[tokio::test(start_paused = true)]
async fn stuck_shows_everywhere_and_logs_one_error_per_episode() {
    let log = log();
    let name = "alert-db";
    let b = Breaker::builder(name)
        .window_calls(2)
        .min_calls(2)
        .open_for(Duration::from_secs(600))
        .alert_after(Duration::from_secs(60))
        .build()
        .unwrap();

    // Episode 1: opened, then open past alert_after while calls keep arriving.
    for _ in 0..2 {
        let _ = fail(&b).await;
    }
    assert_eq!(b.state(), State::Open);
    advance(Duration::from_secs(59)).await;
    assert_eq!(
        look_everywhere(name),
        (false, false, false),
        "not stuck before alert_after"
    );
    assert_eq!(log.count(Level::ERROR, name, "stuck"), 0);
    advance(Duration::from_secs(2)).await;
    for _ in 0..20 {
        assert!(matches!(fail(&b).await, Err(Error::Rejected(_))));
    }
    assert_eq!(
        look_everywhere(name),
        (true, true, true),
        "stuck in Prometheus, the helper and JSON"
    );
    assert_eq!(
        log.count(Level::ERROR, name, "stuck"),
        1,
        "one ERROR for the episode, not one per call"
    );
    advance(Duration::from_secs(120)).await;
    let _ = fail(&b).await;
    look_everywhere(name);
    assert_eq!(log.count(Level::ERROR, name, "stuck"), 1);

    // An operator resets it: the episode ends, and the next one alerts again.
    b.reset();
    assert_eq!(look_everywhere(name), (false, false, false));
    for _ in 0..2 {
        let _ = fail(&b).await;
    }
    advance(Duration::from_secs(61)).await;
    let _ = fail(&b).await;
    assert_eq!(look_everywhere(name), (true, true, true));
    assert_eq!(
        log.count(Level::ERROR, name, "stuck"),
        2,
        "a second episode, a second ERROR"
    );
}

#[test]
fn a_conflicting_call_site_logs_at_error_with_backoff_and_counts_every_time() {
    let log = log();
    let first = Breaker::builder("alerts-conflict")
        .window_calls(2)
        .config()
        .unwrap();
    let other = Breaker::builder("alerts-conflict")
        .window_calls(9)
        .config()
        .unwrap();
    fusebox::registry().keyed(&first, &1);
    for _ in 0..100 {
        fusebox::registry().keyed(&other, &1);
    }
    let logged = log.count(Level::ERROR, "alerts-conflict/1", "registered twice");
    // Occurrences 1, 2, 3, 5, 9, 17, 33, 65: loud at first, then sparser.
    assert_eq!(logged, 8);
    let b = fusebox::registry().breaker("alerts-conflict/1").unwrap();
    assert_eq!(b.metrics().conflicts, 100);
}

#[tokio::test(start_paused = true)]
async fn a_breaker_held_open_by_the_usual_latency_it_learned_says_how_to_let_it_go() {
    // A timeout alone: 80 ms answers teach the usual latency, then every answer takes 2 s (a
    // new normal, twenty-five times the old one, under half the 30 s timeout).
    let log = log();
    let name = "alert-usual";
    let b = Breaker::builder(name)
        .timeout(Duration::from_secs(30))
        .alert_after(Duration::from_secs(60))
        .build()
        .unwrap();
    let call = |ms: u64| {
        let b = b.clone();
        tokio::spawn(async move {
            let _: Result<(), Error<()>> = b
                .call(async move {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok(())
                })
                .await;
        })
    };
    for _ in 0..200 {
        call(80);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let usual = b.metrics().usual_latency.expect("learned");
    for _ in 0..(120 * 20) {
        call(2000);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_ne!(b.state(), State::Closed);
    assert!(b.metrics().stuck);
    let hint = "if that is the new normal, reset() forgets it";
    assert_eq!(log.count(Level::ERROR, name, hint), 1, "{:?}", log.of(name));
    // The 2 s answers were slow: none of them taught it.
    let still = b.metrics().usual_latency.unwrap();
    assert!(
        still < Duration::from_millis(100),
        "{usual:?} then {still:?}"
    );
    // The operator's reset: the 2 s answers are learned as the usual, and it stays closed.
    b.reset();
    for _ in 0..(60 * 20) {
        call(2000);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(b.state(), State::Closed);
    assert!(b.metrics().usual_latency.unwrap() >= Duration::from_millis(1800));
}
