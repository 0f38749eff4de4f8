//! Issue 15: rejections by reason, fallbacks that see the call.

use super::*;

#[breaker(
    name = "oe-reasons",
    window_calls = 2,
    min_calls = 2,
    timeout = "100ms",
    open_for = "1s",
    half_open_calls = 1
)]
#[bulkhead(name = "oe-reasons-pool", pool = 1)]
async fn reasons(takes: Duration, ok: bool) -> Result<(), DepError> {
    tokio::time::sleep(takes).await;
    ok.then_some(()).ok_or(DepError::Down)
}

#[tokio::test(start_paused = true)]
async fn every_refusal_is_counted_under_its_reason_everywhere() {
    // bulkhead_full: one call holds the only slot.
    let held = tokio::spawn(reasons(ms(50), true));
    tokio::task::yield_now().await;
    assert!(matches!(
        reasons(Duration::ZERO, true).await,
        Err(DepError::Refused(Rejection::Full { .. }))
    ));
    held.await.unwrap().unwrap();
    // timed_out: with the held call's success, 1 of 2 failed: opens.
    let _ = reasons(ms(500), true).await;
    // open, twice
    for _ in 0..2 {
        let _ = reasons(Duration::ZERO, true).await;
    }
    // half_open: the one trial is in flight, the next caller is refused.
    advance(secs(1)).await;
    let trial = tokio::spawn(reasons(ms(50), true));
    tokio::task::yield_now().await;
    match reasons(Duration::ZERO, true).await {
        Err(DepError::Refused(Rejection::Open { state, .. })) => assert_eq!(state, State::HalfOpen),
        other => panic!("expected a half-open refusal, got {other:?}"),
    }
    trial.await.unwrap().unwrap();
    // forced_open
    registry().breaker("oe-reasons").unwrap().force_open();
    let _ = reasons(Duration::ZERO, true).await;
    let m = registry().breaker("oe-reasons").unwrap().metrics();
    let r = &m.rejected_by_reason;
    assert_eq!(
        (
            r.open,
            r.forced_open,
            r.half_open,
            r.bulkhead_full,
            r.timed_out
        ),
        (2, 1, 1, 1, 1),
        "{m:?}"
    );
    assert_eq!(m.rejected, 4, "the breaker's own refusals");
    let text = fusebox::metrics::prometheus();
    for (reason, n) in [
        ("open", 2),
        ("forced_open", 1),
        ("half_open", 1),
        ("bulkhead_full", 1),
        ("timed_out", 1),
    ] {
        let line = format!(
            r#"fusebox_breaker_rejected_total{{breaker="oe-reasons",reason="{reason}"}} {n}"#
        );
        assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
    }
}

struct Shop {
    tenant: &'static str,
}

#[derive(Debug, PartialEq)]
enum Confirmation {
    Paid(u32),
    ByEmail {
        tenant: &'static str,
        order: u32,
        why: &'static str,
    },
}

impl Shop {
    #[breaker(name = "oe-shop", key = self.tenant, window_calls = 2, min_calls = 2, fallback = Self::by_email)]
    async fn pay(&self, order: &u32, up: bool) -> Result<Confirmation, DepError> {
        if up {
            Ok(Confirmation::Paid(*order))
        } else {
            Err(DepError::Down)
        }
    }

    async fn by_email(
        &self,
        order: &u32,
        up: &bool,
        err: Error<DepError>,
    ) -> Result<Confirmation, DepError> {
        let _ = up;
        let why = match err {
            Error::Rejected(_) => "refused",
            Error::Failed(_) => "failed",
        };
        Ok(Confirmation::ByEmail {
            tenant: self.tenant,
            order: *order,
            why,
        })
    }
}

#[tokio::test(start_paused = true)]
async fn a_keyed_methods_fallback_sees_self_and_the_order() {
    let acme = Shop { tenant: "acme" };
    let zeta = Shop { tenant: "zeta" };
    assert_eq!(acme.pay(&1, true).await, Ok(Confirmation::Paid(1)));
    // 1 of the last 2 failed: open.
    assert_eq!(
        acme.pay(&2, false).await,
        Ok(Confirmation::ByEmail {
            tenant: "acme",
            order: 2,
            why: "failed"
        })
    );
    assert_eq!(
        registry().breaker("oe-shop/acme").unwrap().state(),
        State::Open
    );
    assert_eq!(
        acme.pay(&4, true).await,
        Ok(Confirmation::ByEmail {
            tenant: "acme",
            order: 4,
            why: "refused"
        })
    );
    assert_eq!(
        zeta.pay(&5, true).await,
        Ok(Confirmation::Paid(5)),
        "another tenant's breaker"
    );
}
