//! DESIGN.md's own example, as a user copies it.

use super::*;

mod example {
    use fusebox::{breaker, bulkhead, Error, Rejection};

    pub struct Order {
        pub cents: u64,
    }

    #[derive(Debug, PartialEq)]
    pub enum Verification {
        Verified,
        WillConfirmByEmail,
    }

    #[derive(Debug)]
    pub enum PayError {
        Declined,
        Unavailable(Rejection),
    }

    impl std::fmt::Display for PayError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self {
                PayError::Declined => f.write_str("declined"),
                PayError::Unavailable(r) => write!(f, "unavailable: {r}"),
            }
        }
    }

    impl From<Rejection> for PayError {
        fn from(r: Rejection) -> Self {
            PayError::Unavailable(r)
        }
    }

    #[breaker(name = "oe-design-payments", trip_p95 = "500ms", half_open_pct = 5, fallback = confirm_by_email)]
    #[bulkhead(pool = 60)]
    pub async fn verify_payment(order: &Order) -> Result<Verification, PayError> {
        if order.cents > 0 {
            Ok(Verification::Verified)
        } else {
            Err(PayError::Declined)
        }
    }

    fn confirm_by_email(err: Error<PayError>) -> Result<Verification, PayError> {
        tracing::warn!(%err, "payment verification degraded");
        Ok(Verification::WillConfirmByEmail)
    }
}

#[tokio::test(start_paused = true)]
async fn designs_example_compiles_and_degrades_to_email() {
    use example::*;
    assert_eq!(
        verify_payment(&Order { cents: 100 }).await.unwrap(),
        Verification::Verified
    );
    assert_eq!(
        verify_payment(&Order { cents: 0 }).await.unwrap(),
        Verification::WillConfirmByEmail
    );
    registry()
        .breaker("oe-design-payments")
        .unwrap()
        .force_open();
    assert_eq!(
        verify_payment(&Order { cents: 100 }).await.unwrap(),
        Verification::WillConfirmByEmail
    );
}

#[tokio::test(start_paused = true)]
async fn inside_a_scope_metrics_and_prometheus_show_the_scopes_breakers_only() {
    let global = Breaker::builder("oe-global-only").build().unwrap();
    global.force_open();
    let _scope = fusebox::testing::scope();
    let m = fusebox::metrics();
    assert!(
        m.breakers.iter().all(|b| b.name != "oe-global-only"),
        "a global breaker leaked in"
    );
    let scoped = m
        .breakers
        .iter()
        .find(|b| b.name == "oe-scoped")
        .expect("annotated, listed");
    assert_eq!((scoped.state, scoped.calls), (State::Closed, 0));
    assert!(m.bulkheads.iter().any(|b| b.name == "oe-scoped-pool"));
    let text = fusebox::metrics::prometheus();
    assert!(!text.contains("oe-global-only"));
    assert!(text.contains(r#"fusebox_breaker_state{breaker="oe-scoped",state="closed"} 1"#));
    assert!(fusebox::metrics::stuck_breakers().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_trial_that_hangs_with_no_timeout_configured_never_holds_half_open() {
    let b = Breaker::builder("oe-hung-trial")
        .window_calls(2)
        .min_calls(2)
        .open_for(secs(1))
        .half_open_calls(1)
        .build()
        .unwrap();
    for _ in 0..2 {
        let _ = call_for(&b, Duration::ZERO, false).await;
    }
    advance(secs(1)).await;
    let hung = {
        let b = b.clone();
        tokio::spawn(async move { b.call(pending::<Result<(), DepError>>()).await })
    };
    tokio::task::yield_now().await;
    assert_eq!(b.state(), State::HalfOpen);
    // Whatever bound the trial gets, it is finite: the caller hears a timeout.
    let r = tokio::time::timeout(Duration::from_secs(3600), hung).await;
    let r = r.expect("the hung trial ended within an hour").unwrap();
    assert!(
        matches!(r, Err(Error::Rejected(Rejection::TimedOut { .. }))),
        "{r:?}"
    );
    assert_ne!(
        b.state(),
        State::HalfOpen,
        "not held half-open by the hung trial"
    );
    advance(secs(3600)).await;
    assert!(admitted(&b).await, "a later trial is admitted");
}
