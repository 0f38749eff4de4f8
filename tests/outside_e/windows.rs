//! Issue 2: windows, refusals that say when, eviction, forced states.

use super::*;

#[tokio::test(start_paused = true)]
async fn a_time_window_forgets_calls_older_than_its_length() {
    let b = Breaker::builder("oe-time-window")
        .window(secs(10))
        .min_calls(5)
        .build()
        .unwrap();
    for _ in 0..4 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    advance(secs(11)).await;
    let _ = call_for(&b, Duration::ZERO, false).await;
    let m = b.metrics();
    assert_eq!((m.state, m.window_calls), (State::Closed, 1), "{m:?}");
    for _ in 0..4 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    assert_eq!(b.state(), State::Open, "5 failures within 10 s");
}

#[tokio::test(start_paused = true)]
async fn an_open_refusal_says_when_the_dependency_will_next_be_tried() {
    let b = Breaker::builder("oe-retry-in")
        .window_calls(2)
        .min_calls(2)
        .open_for(secs(10))
        .build()
        .unwrap();
    for _ in 0..2 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    advance(secs(3)).await;
    match call_for(&b, Duration::ZERO, true).await {
        Err(Error::Rejected(Rejection::Open {
            state, retry_in, ..
        })) => {
            assert_eq!(state, State::Open);
            assert_eq!(retry_in, Some(secs(7)));
        }
        other => panic!("expected an open refusal, got {other:?}"),
    }
    let err: Error<DepError> = Error::Rejected(Rejection::Open {
        name: "x".into(),
        state: State::Open,
        retry_in: None,
    });
    assert!(err.rejection().is_some());
}

#[breaker(name = "oe-zone", key = zone)]
async fn by_zone(zone: &str) -> Result<(), DepError> {
    let _ = zone;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn only_keyed_entries_are_evicted() {
    let b = Breaker::builder("oe-evict").build().unwrap();
    assert!(!registry().evict("oe-evict"), "a static name stays");
    assert!(registry().breaker("oe-evict").unwrap().ptr_eq(&b));
    for zone in ["eu", "us", "ap"] {
        by_zone(zone).await.unwrap();
    }
    assert!(registry().evict("oe-zone/eu"));
    assert!(registry().breaker("oe-zone/eu").is_none());
    assert_eq!(registry().evict_keys("oe-zone"), 2);
    assert!(registry().breaker("oe-zone/us").is_none());
    // A key used again after eviction starts fresh.
    by_zone("us").await.unwrap();
    assert_eq!(registry().breaker("oe-zone/us").unwrap().metrics().calls, 1);
}

#[tokio::test(start_paused = true)]
async fn a_forced_state_given_a_duration_lapses_and_one_held_too_long_is_stuck() {
    let b = Breaker::builder("oe-forced-for")
        .alert_after(secs(60))
        .build()
        .unwrap();
    b.force_open_for(secs(600));
    assert_eq!(b.metrics().force_expires_in, Some(secs(600)));
    advance(secs(61)).await;
    assert!(b.metrics().stuck, "forced open past alert_after is stuck");
    advance(secs(540)).await;
    // Lapsed into half-open: trials decide, so a dependency still down is not hit by all traffic.
    assert!(
        admitted(&b).await,
        "the forced state lapsed after 10 minutes"
    );
    let m = b.metrics();
    assert_eq!((m.state, m.force_expires_in), (State::HalfOpen, None));
    b.reset();
    assert!(!b.metrics().stuck);
    b.force_close();
    advance(secs(61)).await;
    assert!(
        b.metrics().stuck,
        "forced closed past alert_after is stuck too"
    );
}

#[tokio::test(start_paused = true)]
async fn half_open_judges_its_share_by_the_failure_rate() {
    let b = Breaker::builder("oe-share-judged")
        .window_calls(4)
        .min_calls(4)
        .open_for(secs(1))
        .half_open_pct(100)
        .half_open_window(secs(5))
        .build()
        .unwrap();
    let open = |b: Breaker| async move {
        for _ in 0..4 {
            let _ = call_for(&b, Duration::ZERO, false).await;
        }
        assert_eq!(b.state(), State::Open);
        advance(secs(1)).await;
    };
    open(b.clone()).await;
    // 1 of 4 trials fails: 25 % is under 50 %.
    for ok in [true, false, true, true] {
        let _ = call_for(&b, Duration::ZERO, ok).await;
    }
    advance(secs(5)).await;
    assert!(admitted(&b).await);
    assert_eq!(b.state(), State::Closed);
    open(b.clone()).await;
    // 2 of 4 trials fail: 50 % reopens.
    for ok in [true, false, false, true] {
        let _ = call_for(&b, Duration::ZERO, ok).await;
    }
    advance(secs(5)).await;
    assert!(!admitted(&b).await);
    assert_eq!(b.state(), State::Open);
}

#[test]
fn errors_display_what_happened() {
    #[derive(Debug)]
    struct Declined;
    impl std::fmt::Display for Declined {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("card declined")
        }
    }
    impl std::error::Error for Declined {}
    let failed: Error<Declined> = Error::Failed(Declined);
    assert!(failed.to_string().contains("card declined"), "{failed}");
    let open: Error<Declined> = Error::Rejected(Rejection::Open {
        name: "payments".into(),
        state: State::Open,
        retry_in: Some(secs(7)),
    });
    let text = open.to_string();
    assert!(text.contains("payments") && text.contains("open"), "{text}");
    let full = Rejection::Full {
        name: "pool".into(),
        pool: 60,
    }
    .to_string();
    assert!(full.contains("pool") && full.contains("60"), "{full}");
    let _: &dyn std::error::Error = &failed;
}
