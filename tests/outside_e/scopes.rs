//! Issue 8: test scopes.

use super::*;

#[breaker(name = "oe-scoped", window_calls = 2, min_calls = 2, open_for = "10s", stale_for = "1m", stale_key = item)]
#[bulkhead(name = "oe-scoped-pool", pool = 2)]
async fn scoped_price(item: u32, gate: Option<Arc<Notify>>, ok: bool) -> Result<u32, DepError> {
    if let Some(g) = gate {
        g.notified().await;
    }
    if ok {
        Ok(item * 10)
    } else {
        Err(DepError::Down)
    }
}

/// Two tests drive the same annotated breaker to opposite states, in parallel, many times.
async fn scoped_round(fail: bool) {
    let scope = fusebox::testing::scope();
    let mut rec = scope.recorder();
    // Listed in the scope before its first call, fresh.
    fusebox::testing::assert_state("oe-scoped", State::Closed);
    assert_eq!(fusebox::testing::metrics_of("oe-scoped").unwrap().calls, 0);
    for _ in 0..2 {
        let _ = scoped_price(1, None, !fail).await;
        tokio::task::yield_now().await;
    }
    if fail {
        fusebox::testing::assert_state("oe-scoped", State::Open);
        fusebox::testing::assert_calls("oe-scoped", 0, 2, 0);
        assert_eq!(rec.states_of("oe-scoped"), [State::Closed, State::Open]);
    } else {
        fusebox::testing::assert_state("oe-scoped", State::Closed);
        fusebox::testing::assert_calls("oe-scoped", 2, 0, 0);
        assert!(rec.transitions().is_empty());
    }
}

#[tokio::test(start_paused = true)]
async fn same_name_in_parallel_tests_failing_side() {
    for _ in 0..50 {
        scoped_round(true).await;
    }
}

#[tokio::test(start_paused = true)]
async fn same_name_in_parallel_tests_healthy_side() {
    for _ in 0..50 {
        scoped_round(false).await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_scopes_last_good_values_and_bulkhead_vanish_with_it() {
    {
        let _scope = fusebox::testing::scope();
        assert_eq!(scoped_price(7, None, true).await, Ok(70));
        let gate = Arc::new(Notify::new());
        let held = tokio::spawn(scoped_price(8, Some(gate.clone()), true));
        tokio::task::yield_now().await;
        assert_eq!(fusebox::testing::in_flight_of("oe-scoped-pool"), Some(1));
        gate.notify_one();
        assert_eq!(held.await.unwrap(), Ok(80));
        assert_eq!(fusebox::testing::in_flight_of("oe-scoped-pool"), Some(0));
        registry().breaker("oe-scoped").unwrap().force_open();
        assert_eq!(
            scoped_price(7, None, true).await,
            Ok(70),
            "stale while open"
        );
    }
    let _scope = fusebox::testing::scope();
    registry().breaker("oe-scoped").unwrap().force_open();
    assert!(
        matches!(
            scoped_price(7, None, true).await,
            Err(DepError::Refused(Rejection::Open { .. }))
        ),
        "another scope never sees the first one's cached value"
    );
}

#[tokio::test(start_paused = true)]
async fn the_recorder_gives_each_transition_its_virtual_time() {
    let scope = fusebox::testing::scope();
    let mut rec = scope.recorder();
    advance(secs(3)).await;
    for _ in 0..2 {
        let _ = scoped_price(1, None, false).await;
    }
    advance(secs(10)).await;
    assert_eq!(scoped_price(2, None, true).await, Ok(20));
    // The default half-open (a share for a window) judges after its window.
    let states = rec.states_of("oe-scoped");
    assert_eq!(&states[..3], [State::Closed, State::Open, State::HalfOpen]);
    let at: Vec<Duration> = rec
        .timeline_of("oe-scoped")
        .iter()
        .map(|(_, t)| *t)
        .collect();
    assert_eq!(at[0], secs(3), "opened 3 s into the test");
    assert_eq!(at[1], secs(13), "half-open after the 10 s open period");
}

#[test]
fn a_failed_assertion_says_what_it_found() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let _scope = fusebox::testing::scope();
    rt.block_on(async {
        for _ in 0..2 {
            let _ = scoped_price(1, None, false).await;
        }
    });
    let msg = |r: std::thread::Result<()>| -> String {
        let e = r.unwrap_err();
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap()
    };
    let state = msg(std::panic::catch_unwind(|| {
        fusebox::testing::assert_state("oe-scoped", State::Closed)
    }));
    assert!(
        state.contains("oe-scoped") && state.to_lowercase().contains("open"),
        "{state}"
    );
    let calls = msg(std::panic::catch_unwind(|| {
        fusebox::testing::assert_calls("oe-scoped", 2, 0, 0)
    }));
    assert!(
        calls.contains("oe-scoped") && calls.contains("(0, 2, 0)"),
        "{calls}"
    );
    let missing = msg(std::panic::catch_unwind(|| {
        fusebox::testing::assert_state("oe-no-such", State::Closed)
    }));
    assert!(missing.contains("oe-no-such"), "{missing}");
    fusebox::testing::reset_all();
    fusebox::testing::assert_state("oe-scoped", State::Closed);
}
