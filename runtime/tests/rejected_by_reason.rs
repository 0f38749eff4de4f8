//! Rejections counted by reason: open, forced open, half-open not admitted, bulkhead full,
//! timed out; the total `rejected` keeps its meaning (the breaker's own three).

mod common;
use common::*;

use fusebox_runtime::{export, Breaker, Bulkhead, Error, State};
use tokio::time::advance;

#[tokio::test(start_paused = true)]
async fn each_refusal_is_counted_under_its_own_reason() {
    let b = Breaker::builder("rbr-breaker")
        .window_calls(2)
        .timeout(100 * MS)
        .open_for(secs(10))
        .half_open_pct(50)
        .half_open_window(secs(5))
        .build()
        .unwrap();
    // Two timeouts open it: each is a timed-out rejection, not a breaker refusal.
    for _ in 0..2 {
        assert!(is_rejected(&ok(&b, secs(1)).await));
    }
    assert_eq!(b.state(), State::Open);
    for _ in 0..3 {
        assert!(is_rejected(&ok(&b, MS).await));
    }
    // Half-open at 50 %: one trial in flight, the next caller is refused.
    advance(secs(10)).await;
    let b2 = b.clone();
    let trial = tokio::spawn(async move { ok(&b2, secs(1)).await });
    tokio::task::yield_now().await;
    assert_eq!(b.state(), State::HalfOpen);
    assert!(is_rejected(&ok(&b, MS).await));
    trial.await.unwrap().ok();
    b.force_open();
    for _ in 0..4 {
        assert!(is_rejected(&ok(&b, MS).await));
    }
    b.reset();
    let pool = Bulkhead::builder("rbr-pool").pool(1).build().unwrap();
    let (b3, pool3) = (b.clone(), pool.clone());
    let holder = tokio::spawn(async move {
        b3.call_in(&pool3, async {
            tokio::time::sleep(secs(1)).await;
            Ok::<(), &str>(())
        })
        .await
    });
    tokio::task::yield_now().await;
    let full: Result<(), Error<&str>> = b.call_in(&pool, async { Ok(()) }).await;
    assert!(matches!(full, Err(Error::Rejected(_))));
    advance(secs(1)).await;
    holder.await.unwrap().unwrap();

    let m = b.metrics();
    let r = m.rejected_by_reason;
    assert_eq!(
        (
            r.open,
            r.half_open,
            r.forced_open,
            r.bulkhead_full,
            r.timed_out
        ),
        (3, 1, 4, 1, 3),
        "the 1 s trial ran into the 100 ms timeout too"
    );
    assert_eq!(
        m.rejected,
        3 + 1 + 4,
        "the total stays the breaker's own refusals"
    );
    assert_eq!(m.rejected_by_bulkhead, 1);

    let text = export::prometheus();
    for (reason, n) in [
        ("open", 3),
        ("forced_open", 4),
        ("half_open", 1),
        ("bulkhead_full", 1),
        ("timed_out", 3),
    ] {
        let line = format!(
            "fusebox_breaker_rejected_total{{breaker=\"rbr-breaker\",reason=\"{reason}\"}} {n}"
        );
        assert!(
            text.lines().any(|l| l == line),
            "missing `{line}` in\n{text}"
        );
    }
}
