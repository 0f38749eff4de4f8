//! Issue 29: bulkheads outside the code: a pool grown or shrunk live, its limit kind, and a
//! change that ends.

use super::*;

#[bulkhead(name = "ob-pool", pool = 1, max_wait = "5s")]
async fn pooled(takes: Duration) -> Result<(), DepError> {
    tokio::time::sleep(takes).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_larger_pool_given_live_admits_a_waiter_at_once_and_the_codes_pool_returns_on_expiry() {
    let b = registry().bulkhead("ob-pool").unwrap();
    let holder = tokio::spawn(pooled(Duration::from_secs(60)));
    tokio::time::sleep(ms(1)).await;
    let started = tokio::time::Instant::now();
    let waiter = tokio::spawn(pooled(ms(10)));
    tokio::time::sleep(ms(100)).await;
    assert!(!waiter.is_finished(), "one slot, held: the second waits");
    b.change_settings(
        [("pool", "2")],
        Source::Admin,
        Some(Duration::from_secs(30)),
    )
    .unwrap();
    waiter.await.unwrap().unwrap();
    assert!(
        started.elapsed() < ms(200),
        "admitted when the pool grew, not after max_wait: {:?}",
        started.elapsed()
    );
    assert_eq!(b.pool(), 2);
    assert_eq!(
        in_force(&b.settings_in_force(), "pool"),
        ("2".into(), Source::Admin)
    );
    tokio::time::advance(Duration::from_secs(31)).await;
    tokio::task::yield_now().await;
    assert_eq!(b.pool(), 1, "the code's pool is back on expiry");
    assert_eq!(
        in_force(
            &fusebox::metrics().bulkhead("ob-pool").unwrap().settings,
            "pool"
        ),
        ("1".into(), Source::Code)
    );
    holder.abort();
}

#[tokio::test(start_paused = true)]
async fn a_smaller_pool_given_live_lets_calls_keep_their_slots_and_refuses_new_ones() {
    let b = Bulkhead::builder("ob-shrink").pool(3).build().unwrap();
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(b.acquire().await.unwrap());
    }
    b.change_settings([("pool", "1")], Source::Admin, None)
        .unwrap();
    assert_eq!(b.in_flight(), 3, "calls holding a slot keep it");
    assert!(matches!(b.acquire().await, Err(Rejection::Full { .. })));
    held.pop();
    held.pop();
    assert!(
        matches!(b.acquire().await, Err(Rejection::Full { .. })),
        "one in flight: full"
    );
    held.pop();
    let again = b.acquire().await.unwrap();
    assert!(matches!(b.acquire().await, Err(Rejection::Full { .. })));
    drop(again);
    assert!(b.clear_settings_change());
    assert_eq!(b.pool(), 3);
}

#[tokio::test]
async fn a_bulkheads_limit_kind_is_the_codes_and_a_change_of_it_is_refused_with_that_reason() {
    let fixed = Bulkhead::builder("ob-kind").pool(4).build().unwrap();
    let e = fixed
        .change_settings([("limit", "adaptive")], Source::Admin, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("limit"), "{e}");
    assert_eq!(fixed.pool(), 4);
}

#[tokio::test(start_paused = true)]
async fn a_bulkhead_change_that_ends_gives_back_the_start_override() {
    Bulkhead::builder("ob-start-pool").pool(4).build().unwrap();
    let o = Overrides::from_vars([("FUSEBOX_BULKHEAD", "ob-start-pool; pool=6")]).unwrap();
    registry().apply_overrides(&o).unwrap();
    let b = registry().bulkhead("ob-start-pool").unwrap();
    b.change_settings([("pool", "10")], Source::Admin, None)
        .unwrap();
    assert_eq!(b.pool(), 10);
    assert!(b.clear_settings_change());
    assert_eq!(b.pool(), 6);
    assert_eq!(
        in_force(&b.settings_in_force(), "pool"),
        ("6".into(), Source::Env)
    );
}
