//! Issue 29, shadow settings: a candidate configuration judged on the live breaker's calls,
//! refusing nothing. On a paused clock: a live `trip_p95 = "2s"` stays closed on a dependency
//! answering in 800 ms, while a shadow `trip_p95 = "500ms"` says it would have opened, when,
//! how many calls it would have refused, and when it would have closed once the dependency
//! healed; no call was refused. Through an annotated fn and through the builder.

#[path = "common/log.rs"]
mod log;

use std::time::Duration;

use fusebox::{registry, Breaker, Error, State};
use tokio::time::{sleep, Instant};
use tracing::Level;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[fusebox::breaker(name = "shadow-annotated", trip_p95 = "2s")]
async fn verify(latency: Duration) -> Result<(), Error<std::io::Error>> {
    sleep(latency).await;
    Ok(())
}

/// One call every second for `slow_for` (800 ms answers, then 200 ms apart), then every
/// 100 ms for `healed_for` (10 ms answers): (calls made, calls that failed or were refused).
async fn traffic<F, Fut>(call: F, slow_for: Duration, healed_for: Duration) -> (u64, u64)
where
    F: Fn(Duration) -> Fut,
    Fut: std::future::Future<Output = Result<(), Error<std::io::Error>>>,
{
    let (mut made, mut bad) = (0, 0);
    for (latency, gap, phase) in [(ms(800), ms(200), slow_for), (ms(10), ms(90), healed_for)] {
        let end = Instant::now() + phase;
        while Instant::now() < end {
            made += 1;
            bad += u64::from(call(latency).await.is_err());
            sleep(gap).await;
        }
    }
    (made, bad)
}

/// The must-show figures, the same whichever way the breaker was made.
async fn judged_beside(live: &Breaker, call: impl AsyncFnCall) {
    let log = log::log();
    let name = live.name().to_owned();
    let mut transitions = registry().subscribe();
    let set_at = Instant::now();
    let (made, bad) = traffic(
        |d| call.call(d),
        Duration::from_secs(60),
        Duration::from_secs(120),
    )
    .await;

    // The live breaker refused nothing and never opened.
    assert_eq!(bad, 0, "{name}: no call was refused or failed");
    let m = live.metrics();
    assert_eq!(
        (m.state, m.rejected, m.times_opened),
        (State::Closed, 0, 0),
        "{name}"
    );
    assert!(
        transitions.try_recv().is_err(),
        "{name}: no transition broadcast"
    );

    let r = live.shadow().expect("a shadow is set");
    println!(
        "{name}: {made} calls, none refused; the shadow would have opened after {:?}, refused {} calls, opened {} times, closed after {:?}",
        r.opened_after().unwrap_or_default(),
        r.would_have_refused,
        r.openings,
        r.would_have_closed_at.map(|t| t - set_at),
    );
    assert_eq!(r.calls_seen, made, "{name}: the shadow saw every call");
    // 20 calls (min_calls), each 800 ms then 200 ms apart: the 20th ends at 19.8 s, and
    // every one of them is slow by 500 ms.
    let opened = r
        .would_have_opened_at
        .expect("the shadow would have opened");
    assert_eq!(
        opened - set_at,
        ms(19_800),
        "{name}: when it would have opened"
    );
    assert_eq!(r.opened_after(), Some(ms(19_800)));
    assert!(r.openings >= 1, "{name}");
    // Open for 30 s from 19.8 s: at least the 30 calls of that period refused, then most of
    // half-open's (5 % are trials).
    assert!(
        r.would_have_refused >= 30 && r.would_have_refused < made,
        "{name}: would have refused {} of {made}",
        r.would_have_refused
    );
    // Healed at 60 s: it would have closed after a passed half-open, within the two minutes.
    let closed = r
        .would_have_closed_at
        .expect("the shadow would have closed");
    assert!(closed - set_at > Duration::from_secs(60), "{name}");
    assert!(closed - set_at < Duration::from_secs(180), "{name}");
    assert_eq!(r.state, State::Closed, "{name}");

    // Logged as the shadow's, at INFO; nothing logged as the live breaker opening.
    assert_eq!(
        log.count(Level::INFO, &name, "shadow of `"),
        log.count(Level::INFO, &name, "would have")
    );
    assert_eq!(
        log.count(
            Level::INFO,
            &name,
            &format!("shadow of `{name}` would have opened")
        ),
        1
    );
    assert!(
        log.count(
            Level::INFO,
            &name,
            &format!("shadow of `{name}` would have closed")
        ) >= 1
    );
    assert_eq!(log.count(Level::WARN, &name, "circuit breaker opened"), 0);
    assert_eq!(log.count(Level::INFO, &name, "circuit breaker"), 0);
}

/// A call made by the test (a closure returning a future, spelled as a trait so both
/// callers' futures fit).
trait AsyncFnCall {
    fn call(
        &self,
        latency: Duration,
    ) -> impl std::future::Future<Output = Result<(), Error<std::io::Error>>>;
}

#[tokio::test(start_paused = true)]
async fn an_annotated_breakers_shadow_would_have_opened_on_slow_answers_it_let_through() {
    struct Annotated;
    impl AsyncFnCall for Annotated {
        async fn call(&self, latency: Duration) -> Result<(), Error<std::io::Error>> {
            verify(latency).await
        }
    }
    // Listed before its first call: the shadow sees the very first one.
    let live = registry()
        .breaker("shadow-annotated")
        .expect("listed at start");
    live.set_shadow([("trip_p95", "500ms")]).unwrap();
    judged_beside(&live, Annotated).await;
}

#[tokio::test(start_paused = true)]
async fn a_built_breakers_shadow_would_have_opened_on_slow_answers_it_let_through() {
    struct Built(Breaker);
    impl AsyncFnCall for Built {
        async fn call(&self, latency: Duration) -> Result<(), Error<std::io::Error>> {
            self.0
                .call(async {
                    sleep(latency).await;
                    Ok(())
                })
                .await
        }
    }
    let live = Breaker::builder("shadow-built")
        .trip_p95(Duration::from_secs(2))
        .build()
        .unwrap();
    live.set_shadow(Breaker::builder("candidate").trip_p95(ms(500)))
        .unwrap();
    judged_beside(&live, Built(live.clone())).await;
}
