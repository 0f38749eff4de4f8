//! A breaker forced open until changed, on the real clock, where its refusals take the fast
//! path (`Core::refuse_while_forced_open`: the coarse clock, then no clock once reported
//! stuck). Bounded real time (about 2 s); nothing in this binary pauses a clock (a paused clock
//! seen anywhere in the process turns the coarse clock off).

#[path = "common/log.rs"]
mod log;

use std::sync::Arc;
use std::time::{Duration, Instant};

use fusebox::{Breaker, Error, Rejection, State};
use tracing::Level;

const STUCK: &str = "circuit breaker stuck";

async fn once(b: &Breaker) -> Result<u32, Error<&'static str>> {
    b.call(async { Ok::<u32, &'static str>(7) }).await
}

fn held_refusal(r: &Result<u32, Error<&'static str>>) -> bool {
    matches!(
        r,
        Err(Error::Rejected(Rejection::Open {
            state: State::ForcedOpen,
            retry_in: None,
            ..
        }))
    )
}

/// Four tasks on two workers refused for three times `alert_after`: the stuck ERROR is logged
/// once, never before `alert_after`, every refusal is counted, and a reset lets calls in. A
/// second force is a new episode, logged again.
#[test]
fn a_held_force_is_reported_stuck_once_after_alert_after_and_every_refusal_counted() {
    const ALERT_AFTER: Duration = Duration::from_millis(200);
    let log = log::log();
    let name = "forced-held-real-stuck";
    let stuck = || log.count(Level::ERROR, name, STUCK);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let b = Arc::new(
            Breaker::builder(name)
                .alert_after(ALERT_AFTER)
                .build_detached()
                .unwrap(),
        );
        let start = Instant::now();
        b.force_open();
        let tasks: Vec<_> = (0..4)
            .map(|_| {
                let b = b.clone();
                let log = log.clone();
                tokio::spawn(async move {
                    let mut refused = 0u64;
                    while start.elapsed() < ALERT_AFTER * 3 {
                        let r = once(&b).await;
                        assert!(held_refusal(&r), "held open: {r:?}");
                        refused += 1;
                        // Read before the clock: a line seen here was logged by now.
                        let logged = log.count(Level::ERROR, name, STUCK);
                        if logged > 0 {
                            assert!(
                                start.elapsed() >= ALERT_AFTER,
                                "stuck logged {:?} after the force",
                                start.elapsed()
                            );
                        }
                        if refused % 64 == 0 {
                            tokio::task::yield_now().await;
                        }
                    }
                    refused
                })
            })
            .collect();
        let mut refused = 0;
        for t in tasks {
            refused += t.await.unwrap();
        }
        assert_eq!(stuck(), 1, "{:?}", log.of(name));
        let m = b.metrics();
        assert!(m.stuck);
        assert_eq!(m.rejected_by_reason.forced_open, refused);
        // Reported: refused on, with no clock read, and counted.
        for _ in 0..1000 {
            assert!(held_refusal(&once(&b).await));
        }
        assert_eq!(b.metrics().rejected_by_reason.forced_open, refused + 1000);
        b.reset();
        assert_eq!(once(&b).await, Ok(7));
        // A new force, a new episode: reported again once it is old enough.
        b.force_open();
        let again = Instant::now();
        while again.elapsed() < ALERT_AFTER * 2 {
            assert!(held_refusal(&once(&b).await));
            tokio::task::yield_now().await;
        }
        assert_eq!(stuck(), 2, "{:?}", log.of(name));
    });
}
