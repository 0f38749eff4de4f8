//! The testing guide's example (`fusebox::guide::testing`), verbatim (a test checks the guide shows it).
#![cfg(feature = "testing")]

// README-EXAMPLE-START
use std::time::Duration;

use fusebox::{breaker, testing, Rejection, State};

#[derive(Debug)]
enum PayError {
    Declined,
    Unavailable(Rejection),
}

impl From<Rejection> for PayError {
    fn from(r: Rejection) -> Self {
        PayError::Unavailable(r)
    }
}

#[breaker(name = "payments", window_calls = 4, half_open_calls = 1)]
async fn verify(ok: bool) -> Result<&'static str, PayError> {
    if ok {
        Ok("verified")
    } else {
        Err(PayError::Declined)
    }
}

#[tokio::test(start_paused = true)]
async fn payments_recover_after_the_open_period() {
    // This test's own registry: tests running in parallel may use "payments" too.
    let scope = testing::scope();
    let mut transitions = scope.recorder();

    for _ in 0..4 {
        let _ = verify(false).await;
    }
    testing::assert_state("payments", State::Open);
    match verify(true).await {
        Err(PayError::Unavailable(rejection)) => assert_eq!(rejection.name(), "payments"),
        other => panic!("expected a rejection, got {other:?}"),
    }

    tokio::time::advance(Duration::from_secs(30)).await;
    assert_eq!(verify(true).await.unwrap(), "verified");

    testing::assert_state("payments", State::Closed);
    testing::assert_calls("payments", 1, 4, 1);
    assert_eq!(
        transitions.states_of("payments"),
        [State::Closed, State::Open, State::HalfOpen, State::Closed]
    );
    let at: Vec<u64> = transitions
        .timeline_of("payments")
        .iter()
        .map(|(_, t)| t.as_secs())
        .collect();
    assert_eq!(at, [0, 30, 30]);
}
// README-EXAMPLE-END

#[test]
fn the_testing_guide_shows_this_example() {
    let me = include_str!("testing_example.rs");
    let start = me.find("// README-EXAMPLE-START\n").unwrap() + "// README-EXAMPLE-START\n".len();
    let end = me.find("// README-EXAMPLE-END").unwrap();
    let guide = include_str!("../docs/guide/testing.md");
    assert!(
        guide.contains(&me[start..end]),
        "docs/guide/testing.md's example differs from tests/testing_example.rs"
    );
}
