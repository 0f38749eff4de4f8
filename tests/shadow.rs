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
    // Other tests' breakers share the global channel: only this name's count.
    while let Ok(t) = transitions.try_recv() {
        assert_ne!(&*t.name, name, "{name}: no transition broadcast: {t:?}");
    }

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

/// Ten calls, one in five failing, 10 ms each: a 50 % live breaker stays closed, a 20 %
/// shadow (10-call window, 5 calls minimum) would open at the fifth.
async fn one_in_five_failing(b: &Breaker, calls: u32) {
    for i in 0..calls {
        let _: Result<(), Error<&str>> = b
            .call(async move {
                sleep(ms(10)).await;
                if i % 5 == 4 {
                    Err("boom")
                } else {
                    Ok(())
                }
            })
            .await;
    }
}

const STRICTER: [(&str, &str); 3] = [
    ("window_calls", "10"),
    ("min_calls", "5"),
    ("failure_rate", "20"),
];

#[tokio::test(start_paused = true)]
async fn the_shadow_shows_in_metrics_json_and_prometheus_and_goes_when_dropped() {
    let name = "shadow-everywhere";
    let live = Breaker::builder(name).window_calls(10).build().unwrap();
    live.set_shadow(STRICTER).unwrap();
    one_in_five_failing(&live, 10).await;
    sleep(Duration::from_secs(3)).await;

    let m = fusebox::metrics();
    let s = m
        .breaker(name)
        .unwrap()
        .shadow
        .as_ref()
        .expect("in metrics()");
    assert_eq!((s.state, s.openings, s.calls_seen), (State::Open, 1, 10));
    assert_eq!(s.would_have_refused, 5, "the five calls after the fifth");
    // Opened at the fifth call's end (50 ms), 3.05 s ago.
    assert_eq!(s.opened_ago, Some(ms(3050)));
    assert_eq!(s.age, Duration::from_secs(3) + ms(100));
    assert_eq!(s.settings.failure_rate(), 20);
    assert_eq!(m.breaker(name).unwrap().state, State::Closed);

    #[cfg(feature = "serde")]
    {
        let json = serde_json::to_value(m.breaker(name).unwrap()).unwrap();
        let s = &json["shadow"];
        assert_eq!(s["state"], "open", "{json}");
        assert_eq!(s["would_have_refused"], 5);
        assert_eq!(s["opened_ago_s"], 3.05);
        assert_eq!(s["closed_ago_s"], serde_json::Value::Null);
        assert_eq!(s["settings"]["failure_rate"], 20);
        // The candidate's durations as every other duration in the JSON: seconds under `_s`
        // (a review: `"open_for":{"secs":30,"nanos":0}`, `ramp_ns`, `derived_bits`).
        assert_eq!(s["settings"]["open_for_s"], 30.0, "{json}");
        assert_eq!(s["settings"]["name"], name);
        let text = s["settings"].to_string();
        for internal in ["secs", "nanos", "_ns", "derived"] {
            assert!(!text.contains(internal), "{internal} in {text}");
        }
    }

    let text = fusebox::export::prometheus();
    for line in [
        format!("fusebox_shadow_state{{breaker=\"{name}\",state=\"open\"}} 1\n"),
        format!("fusebox_shadow_would_have_refused_total{{breaker=\"{name}\"}} 5\n"),
        format!("fusebox_shadow_calls_seen_total{{breaker=\"{name}\"}} 10\n"),
        format!("fusebox_shadow_opened_total{{breaker=\"{name}\"}} 1\n"),
        format!("fusebox_shadow_opened_ago_seconds{{breaker=\"{name}\"}} 3.05\n"),
    ] {
        assert!(text.contains(&line), "{line} in\n{text}");
    }
    assert!(text.contains("# TYPE fusebox_shadow_would_have_refused_total counter"));

    let last = live.drop_shadow().expect("it was set");
    assert_eq!(last.would_have_refused, 5);
    assert!(live.shadow().is_none());
    assert!(fusebox::metrics().breaker(name).unwrap().shadow.is_none());
    assert!(!fusebox::export::prometheus()
        .contains(&format!("fusebox_shadow_state{{breaker=\"{name}\"")));
    // Calls go on as before, and nothing judges them beside.
    one_in_five_failing(&live, 10).await;
    assert_eq!(live.metrics().state, State::Closed);
}

#[tokio::test(start_paused = true)]
async fn a_bad_candidate_is_a_typed_error_naming_the_key_and_leaves_the_shadow_as_it_was() {
    let live = Breaker::builder("shadow-bad").build_detached().unwrap();
    live.set_shadow([("failure_rate", "20")]).unwrap();
    let e = live.set_shadow([("failure_rate", "120")]).unwrap_err();
    assert!(e.to_string().contains("failure_rate"), "{e}");
    assert!(e.to_string().contains("120"), "{e}");
    let e = live.set_shadow([("trip_p95", "fast")]).unwrap_err();
    assert!(
        matches!(e, fusebox::settings::ConfigError::BadDuration { .. }),
        "{e:?}"
    );
    let e = live.set_shadow([("no_such_key", "1")]).unwrap_err();
    assert!(e.to_string().contains("no_such_key"), "{e}");
    assert_eq!(live.shadow().unwrap().settings.failure_rate(), 20, "kept");
    assert!(live.set_shadow(Breaker::builder("x").min_calls(0)).is_err());
}

#[tokio::test(start_paused = true)]
async fn promoting_puts_the_candidate_whole_in_force_and_keeps_the_codes_settings() {
    let live = Breaker::builder("shadow-promote")
        .timeout(ms(800))
        .build_detached()
        .unwrap();
    assert!(live.promote_shadow().is_none());
    // A builder is a candidate whole: this one has no timeout, which text could not carry.
    live.set_shadow(
        Breaker::builder("whatever")
            .failure_rate(20)
            .window_calls(10),
    )
    .unwrap();
    let candidate = live.promote_shadow().unwrap();
    assert_eq!(
        (candidate.name(), candidate.failure_rate()),
        ("shadow-promote", 20)
    );
    assert!(live.shadow().is_none());
    let in_force = live.config_in_force();
    assert_eq!(in_force.failure_rate(), 20);
    assert_eq!(in_force.timeout(), None, "the candidate's settings, whole");
    assert_eq!(in_force.settings(), candidate.settings());
    assert_eq!(live.config().timeout(), Some(ms(800)), "the code's, kept");
    assert!(live.clear_settings_change());
    assert_eq!(live.config_in_force().timeout(), Some(ms(800)));
}

#[tokio::test(start_paused = true)]
async fn calls_the_live_breaker_refuses_are_seen_and_the_shadow_may_refuse_them_too() {
    let live = Breaker::builder("shadow-both-open")
        .window_calls(10)
        .min_calls(5)
        .build_detached()
        .unwrap();
    live.set_shadow(STRICTER).unwrap();
    for _ in 0..5 {
        let _: Result<(), Error<&str>> = live.call(async { Err("down") }).await;
    }
    assert_eq!(live.state(), State::Open);
    for _ in 0..7 {
        let r: Result<(), Error<&str>> = live.call(async { Ok(()) }).await;
        assert!(r.is_err(), "refused by the live breaker");
    }
    let r = live.shadow().unwrap();
    assert_eq!(
        (r.calls_seen, r.would_have_refused, r.state),
        (12, 7, State::Open)
    );
    // A looser shadow would have let them through: seen, not refused, not judged. Pairs are
    // layered on the live settings: a 10-call window cannot hold 100 calls, so the candidate
    // says which window it judges in.
    let e = live.set_shadow([("min_calls", "100")]).unwrap_err();
    assert!(
        matches!(
            e,
            fusebox::settings::ConfigError::OutOfRange {
                field: "min_calls",
                ..
            }
        ),
        "{e:?}"
    );
    live.set_shadow([
        ("failure_rate", "100"),
        ("min_calls", "100"),
        ("window", "30s"),
    ])
    .unwrap();
    for _ in 0..3 {
        let _: Result<(), Error<&str>> = live.call(async { Ok(()) }).await;
    }
    let r = live.shadow().unwrap();
    assert_eq!(
        (r.calls_seen, r.would_have_refused, r.window_calls),
        (3, 0, 0)
    );
}

#[tokio::test(start_paused = true)]
async fn a_shorter_timeout_in_the_shadow_times_out_what_the_live_one_let_finish() {
    let live = Breaker::builder("shadow-timeout")
        .timeout(Duration::from_secs(2))
        .build_detached()
        .unwrap();
    live.set_shadow([
        ("timeout", "500ms"),
        ("window_calls", "4"),
        ("min_calls", "4"),
    ])
    .unwrap();
    for _ in 0..4 {
        let r: Result<(), Error<&str>> = live
            .call(async {
                sleep(ms(800)).await;
                Ok(())
            })
            .await;
        assert!(r.is_ok());
    }
    let r = live.shadow().unwrap();
    assert_eq!(
        (r.state, r.failure_rate),
        (State::Open, 100.0),
        "timed out by the shadow's 500 ms"
    );
    assert_eq!(live.state(), State::Closed);
}

#[tokio::test(start_paused = true)]
async fn a_shadow_away_from_closed_past_alert_after_logs_nothing_as_the_live_breaker() {
    let log = log::log();
    let name = "shadow-stuck";
    // The live breaker judges nothing before 1000 calls; the shadow trips at 5.
    let live = Breaker::builder(name)
        .window_calls(1000)
        .min_calls(1000)
        .build()
        .unwrap();
    live.set_shadow([
        ("window_calls", "10"),
        ("min_calls", "5"),
        ("alert_after", "60s"),
        ("open_for", "5s"),
    ])
    .unwrap();
    for _ in 0..900 {
        let _: Result<(), Error<&str>> = live.call(async { Err("down") }).await;
        sleep(ms(100)).await;
    }
    let r = live.shadow().unwrap();
    assert!(r.openings > 1 && r.state != State::Closed, "{r:?}");
    assert!(!live.metrics().stuck);
    assert_eq!(log.count(Level::ERROR, name, "stuck"), 0);
    assert_eq!(log.count(Level::INFO, name, "circuit breaker"), 0);
    assert_eq!(log.count(Level::WARN, name, "circuit breaker"), 0);
    assert!(log.count(Level::INFO, name, "would have reopened") >= 1);
}
