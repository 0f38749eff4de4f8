//! Issue 29: live changes over the code's settings and the start overrides: what an expiry
//! gives back, what a change does to calls in flight, thresholds and windows, a keyed
//! breaker's key, and a shadow layered on the settings in force.

use super::*;

#[breaker(name = "ob-ship", timeout = "300ms")]
async fn ship(takes: Duration) -> Result<(), DepError> {
    tokio::time::sleep(takes).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_live_change_that_expires_gives_back_the_start_overrides_not_the_codes_values() {
    let o = Overrides::from_vars([("FUSEBOX_BREAKER_SHIP", "ob-ship; timeout=1s")]).unwrap();
    registry().apply_overrides(&o).unwrap();
    let b = registry().breaker("ob-ship").unwrap();
    ship(ms(800)).await.unwrap();
    b.change_settings(
        [("timeout", "2s")],
        Source::Admin,
        Some(Duration::from_secs(10)),
    )
    .unwrap();
    assert_eq!(
        in_force(&b.settings_in_force(), "timeout"),
        ("2s".into(), Source::Admin)
    );
    ship(ms(1500)).await.unwrap();
    tokio::time::advance(Duration::from_secs(10)).await;
    // The change has lapsed: the environment's 1 s is back, not the code's 300 ms.
    assert!(matches!(
        ship(ms(1500)).await,
        Err(DepError::Refused(Rejection::TimedOut { .. }))
    ));
    ship(ms(800)).await.unwrap();
    assert_eq!(
        in_force(&b.settings_in_force(), "timeout"),
        ("1s".into(), Source::Env)
    );
    assert!(!b.clear_settings_change(), "nothing left to end");
    assert_eq!(b.config_in_force().timeout(), Some(Duration::from_secs(1)));
}

#[tokio::test(start_paused = true)]
async fn calls_in_flight_finish_under_the_timeout_that_admitted_them() {
    let b = Breaker::builder("ob-inflight")
        .timeout(ms(300))
        .build_detached()
        .unwrap();
    let admitted_short = {
        let b = b.clone();
        tokio::spawn(async move {
            b.call(async {
                tokio::time::sleep(ms(500)).await;
                Ok::<_, ()>(())
            })
            .await
        })
    };
    tokio::time::sleep(ms(10)).await;
    b.change_settings([("timeout", "2s")], Source::Admin, None)
        .unwrap();
    let admitted_long = {
        let b = b.clone();
        tokio::spawn(async move {
            b.call(async {
                tokio::time::sleep(ms(500)).await;
                Ok::<_, ()>(())
            })
            .await
        })
    };
    tokio::time::sleep(ms(10)).await;
    b.change_settings([("timeout", "100ms")], Source::Admin, None)
        .unwrap();
    assert!(matches!(
        admitted_short.await.unwrap(),
        Err(fusebox::Error::Rejected(Rejection::TimedOut { .. }))
    ));
    assert_eq!(admitted_long.await.unwrap(), Ok(()), "admitted under 2 s");
    // The next call is under 100 ms.
    let r = b
        .call(async {
            tokio::time::sleep(ms(150)).await;
            Ok::<_, ()>(())
        })
        .await;
    assert!(matches!(
        r,
        Err(fusebox::Error::Rejected(Rejection::TimedOut { .. }))
    ));
}

/// `ok` successes, then `n` failures.
async fn fail(b: &Breaker, n: usize, ok: usize) {
    for _ in 0..ok {
        let _ = b.call(async { Ok::<_, &str>(()) }).await;
    }
    for _ in 0..n {
        let _ = b.call(async { Err::<(), _>("down") }).await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_new_threshold_is_judged_at_the_next_call_and_a_new_window_kind_starts_empty() {
    let b = Breaker::builder("ob-judge")
        .window_calls(10)
        .min_calls(10)
        .failure_rate(50)
        .build_detached()
        .unwrap();
    fail(&b, 4, 6).await;
    assert_eq!(b.state(), State::Closed, "40 % under 50 %");
    b.change_settings([("failure_rate", "30")], Source::Admin, None)
        .unwrap();
    assert_eq!(b.state(), State::Closed, "not judged until a call");
    fail(&b, 0, 1).await;
    assert_eq!(
        b.state(),
        State::Open,
        "judged at the next call: 40 % over 30 %"
    );

    // A change that ends gives back the code's stricter threshold, judged then too.
    let d = Breaker::builder("ob-judge-back")
        .window_calls(10)
        .min_calls(10)
        .failure_rate(50)
        .build_detached()
        .unwrap();
    d.change_settings(
        [("failure_rate", "80")],
        Source::Admin,
        Some(Duration::from_secs(10)),
    )
    .unwrap();
    fail(&d, 6, 4).await;
    assert_eq!(d.state(), State::Closed, "60 % under 80 %");
    tokio::time::advance(Duration::from_secs(10)).await;
    fail(&d, 0, 1).await;
    assert_eq!(
        d.state(),
        State::Open,
        "the code's 50 % is back: 60 % over it"
    );

    let c = Breaker::builder("ob-window")
        .window_calls(10)
        .min_calls(5)
        .failure_rate(50)
        .build_detached()
        .unwrap();
    fail(&c, 2, 3).await;
    assert_eq!(c.state(), State::Closed, "40 % under 50 %");
    c.change_settings([("window", "10s")], Source::Admin, None)
        .unwrap();
    // Had the old calls been kept, one more failure (3 of 6) would open it.
    fail(&c, 1, 0).await;
    assert_eq!(c.state(), State::Closed, "a new, empty window");
    assert_eq!(c.metrics().window_calls, 1);
}

#[tokio::test(start_paused = true)]
async fn a_keyed_breakers_key_changes_live_over_its_start_pattern_and_returns_to_it() {
    let o = Overrides::new().breaker("ob-keyed/*", [("failure_rate", "30")], Source::File);
    registry().apply_overrides(&o).unwrap();
    keyed_call("eu").await.unwrap();
    keyed_call("us").await.unwrap();
    let eu = registry().breaker("ob-keyed/eu").unwrap();
    eu.change_settings(
        [("failure_rate", "90")],
        Source::Admin,
        Some(Duration::from_secs(5)),
    )
    .unwrap();
    let us = registry().breaker("ob-keyed/us").unwrap();
    assert_eq!(
        in_force(&us.settings_in_force(), "failure_rate"),
        ("30".into(), Source::File)
    );
    assert_eq!(
        in_force(&eu.settings_in_force(), "failure_rate"),
        ("90".into(), Source::Admin)
    );
    tokio::time::advance(Duration::from_secs(5)).await;
    assert_eq!(
        in_force(&eu.settings_in_force(), "failure_rate"),
        ("30".into(), Source::File)
    );
}

#[tokio::test(start_paused = true)]
async fn shadow_pairs_are_layered_on_the_settings_in_force_not_the_codes() {
    let b = Breaker::builder("ob-shadow-live").build_detached().unwrap();
    b.change_settings([("failure_rate", "80")], Source::Admin, None)
        .unwrap();
    b.set_shadow([("min_calls", "5")]).unwrap();
    let s = b.shadow().unwrap().settings;
    assert_eq!((s.failure_rate(), s.min_calls()), (80, 5));
    assert_eq!(b.metrics().shadow.unwrap().settings.failure_rate(), 80);
}
