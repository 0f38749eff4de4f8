//! The stuck ERROR of a breaker is logged for the test whose breaker it is.
//!
//! A parallel test on a paused clock of its own, an hour ahead, that reads every breaker's
//! metrics sees this one stuck long before its own clock does. Its snapshot must not take the
//! episode's one ERROR (logged to that other test's subscriber): the breaker's own test logs
//! it, to its own subscriber, when its own clock gets there. One test in this binary: it
//! captures logs with a subscriber of its thread.

use std::time::Duration;

use fusebox::{breaker, registry, Rejection, State};
use tokio::runtime::{Builder, Runtime};

#[path = "common/thread_log.rs"]
mod thread_log;
use thread_log::ThreadLog;

#[derive(Debug)]
struct Down(#[allow(dead_code)] Option<Rejection>);

impl From<Rejection> for Down {
    fn from(r: Rejection) -> Self {
        Down(Some(r))
    }
}

fn paused() -> Runtime {
    Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
}

#[breaker(
    name = "stuck-owner",
    window_calls = 2,
    min_calls = 2,
    open_for = "10m",
    alert_after = "1m"
)]
async fn dep() -> Result<(), Down> {
    Err(Down(None))
}

#[test]
fn the_stuck_error_is_logged_by_the_breakers_own_test_not_a_readers_ahead() {
    let log = ThreadLog::default();
    let _g = log.install();
    let rt = paused();
    rt.block_on(async {
        let _ = dep().await;
        let _ = dep().await;
        assert_eq!(
            registry().breaker("stuck-owner").unwrap().state(),
            State::Open
        );
    });
    std::thread::spawn(|| {
        paused().block_on(async {
            tokio::time::advance(Duration::from_secs(300)).await;
            let _ = fusebox::metrics();
            let _ = fusebox::stuck_breakers();
        })
    })
    .join()
    .unwrap();
    rt.block_on(async {
        let b = registry().breaker("stuck-owner").unwrap();
        assert!(!b.metrics().stuck, "open 0 s on its own clock");
        tokio::time::advance(Duration::from_secs(61)).await;
        // Its own snapshot tells, as a scrape would with no call coming.
        assert!(b.metrics().stuck);
        assert!(matches!(
            dep().await,
            Err(Down(Some(Rejection::Open { .. })))
        ));
    });
    let got: Vec<String> = log
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("ERROR"))
        .collect();
    assert_eq!(
        got.len(),
        1,
        "one ERROR, in the breaker's own test: {got:?}"
    );
    assert!(got[0].contains("unhealthy_for=61s"), "{got:?}");
}
