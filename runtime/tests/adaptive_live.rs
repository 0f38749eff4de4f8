//! Issue 29 for adaptive bulkheads: their bounds (`min_pool`, `max_pool`) and the limit they
//! start from (`pool`) change while running; the limit's kind stays the code's.

use fusebox_runtime::{Bulkhead, ConfigError, Rejection, Source};

fn value(b: &Bulkhead, key: &str) -> String {
    let s = b.settings_in_force();
    let s = s.iter().find(|s| s.key == key).expect(key);
    format!("{}/{}", s.value, s.source)
}

/// Slots a fail-fast bulkhead hands out before it refuses.
async fn admits(b: &Bulkhead) -> usize {
    let mut held = Vec::new();
    loop {
        match b.acquire().await {
            Ok(p) => held.push(p),
            Err(Rejection::Full { .. }) => return held.len(),
            Err(e) => panic!("{e}"),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn an_adaptive_bulkheads_bounds_and_start_change_while_running() {
    let b = Bulkhead::builder("adaptive-live")
        .adaptive()
        .pool(8)
        .min_pool(2)
        .max_pool(20)
        .build_detached()
        .unwrap();
    assert_eq!((b.pool(), admits(&b).await), (8, 8));

    // A ceiling under the start is the table's error, as in the attribute: say both.
    let e = b
        .change_settings([("max_pool", "5")], Source::Admin, None)
        .unwrap_err();
    assert!(
        matches!(e, ConfigError::OutOfRange { field: "pool", .. }),
        "{e}"
    );
    assert_eq!(b.pool(), 8, "a refused change changes nothing");
    // A lower ceiling pulls the limit under it at once, and calls past it are refused.
    b.change_settings([("max_pool", "5"), ("pool", "5")], Source::Admin, None)
        .unwrap();
    let a = b.metrics().adaptive.unwrap();
    assert_eq!((a.min_pool, a.max_pool), (2, 5));
    assert_eq!((b.pool(), admits(&b).await), (5, 5));
    assert_eq!(value(&b, "max_pool"), "5/admin");
    assert_eq!(value(&b, "min_pool"), "2/code");
    assert!(
        a.history.last().is_some_and(|c| c.limit == 5),
        "the change is in the limit's history: {:?}",
        a.history
    );

    // A new start (the change replaces the last one: the ceiling is the code's again).
    b.change_settings([("pool", "3"), ("min_pool", "3")], Source::Admin, None)
        .unwrap();
    let a = b.metrics().adaptive.unwrap();
    assert_eq!((a.min_pool, a.max_pool, b.pool()), (3, 20, 3));
    assert_eq!(admits(&b).await, 3);

    // Bounds that cross are the table's error, and change nothing.
    let e = b
        .change_settings([("min_pool", "30")], Source::Admin, None)
        .unwrap_err();
    assert!(
        matches!(
            e,
            ConfigError::Conflict { .. } | ConfigError::OutOfRange { .. }
        ),
        "{e}"
    );
    assert_eq!(b.pool(), 3);

    // The kind is the code's, with the reason.
    let e = b
        .change_settings([("limit", "fixed")], Source::Admin, None)
        .unwrap_err();
    assert!(e.to_string().contains("the limit's kind"), "{e}");

    // Ended: the code's bounds and start come back.
    assert!(b.clear_settings_change());
    let a = b.metrics().adaptive.unwrap();
    assert_eq!((a.min_pool, a.max_pool, b.pool()), (2, 20, 8));
    assert_eq!(value(&b, "max_pool"), "20/code");
}

#[test]
fn a_fixed_pool_takes_no_adaptive_bounds() {
    let b = Bulkhead::builder("fixed-live")
        .pool(4)
        .build_detached()
        .unwrap();
    let e = b
        .change_settings([("max_pool", "8")], Source::Admin, None)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("an adaptive one `min_pool` and `max_pool`"),
        "{e}"
    );
    assert_eq!(b.pool(), 4);
    b.change_settings([("pool", "6")], Source::Admin, None)
        .unwrap();
    assert_eq!(b.pool(), 6);
}
