//! The registry: one breaker per name, keyed breakers, conflicts, eviction, metrics.

mod common;
use common::*;

use fusebox_runtime::{metrics, registry, Breaker, State};

#[tokio::test(start_paused = true)]
async fn same_name_is_the_same_breaker() {
    let a = Breaker::builder("reg-same")
        .window_calls(2)
        .build()
        .unwrap();
    let b = Breaker::builder("reg-same")
        .window_calls(2)
        .build()
        .unwrap();
    assert!(a.ptr_eq(&b));
    let _ = fail(&a, MS).await;
    let _ = fail(&a, MS).await;
    assert_eq!(b.state(), State::Open);
    assert_eq!(b.metrics().conflicts, 0);
}

#[tokio::test(start_paused = true)]
async fn a_conflicting_registration_keeps_the_first_and_reports_it() {
    let first = Breaker::builder("reg-conflict")
        .failure_rate(50)
        .build()
        .unwrap();
    let second = Breaker::builder("reg-conflict")
        .failure_rate(10)
        .build()
        .unwrap();
    assert!(first.ptr_eq(&second));
    assert_eq!(
        second.config().failure_rate(),
        50,
        "the first settings are kept"
    );
    assert_eq!(metrics().breaker("reg-conflict").unwrap().conflicts, 1);
}

#[tokio::test(start_paused = true)]
async fn keyed_breakers_are_independent_and_evictable() {
    let template = Breaker::builder("reg-redis")
        .window_calls(2)
        .config()
        .unwrap();
    let shard3 = registry().keyed(&template, &3);
    let shard4 = registry().keyed(&template, &4);
    assert_eq!(shard3.name(), "reg-redis/3");
    let _ = fail(&shard3, MS).await;
    let _ = fail(&shard3, MS).await;
    assert_eq!(shard3.state(), State::Open);
    assert_eq!(
        shard4.state(),
        State::Closed,
        "one failing shard leaves the others alone"
    );
    assert!(registry().keyed(&template, &3).ptr_eq(&shard3));
    let m = metrics();
    let m3 = m.breaker("reg-redis/3").unwrap();
    assert_eq!(m3.key.as_deref(), Some("3"));

    assert!(registry().evict("reg-redis/3"));
    assert!(registry().breaker("reg-redis/3").is_none());
    assert_eq!(
        registry().keyed(&template, &3).state(),
        State::Closed,
        "evicted: fresh next time"
    );
    assert_eq!(registry().evict_keys("reg-redis"), 2);
    let plain = Breaker::builder("reg-plain").build().unwrap();
    assert!(
        !registry().evict(plain.name()),
        "unkeyed breakers are never evicted"
    );
}

#[tokio::test(start_paused = true)]
async fn metrics_show_what_happened() {
    let b = Breaker::builder("reg-metrics")
        .window_calls(10)
        .min_calls(10)
        .build()
        .unwrap();
    for _ in 0..6 {
        ok(&b, 10 * MS).await.unwrap();
    }
    for _ in 0..3 {
        let _ = fail(&b, 10 * MS).await;
    }
    tokio::time::advance(secs(2)).await;
    let m = b.metrics();
    assert_eq!(m.state, State::Closed);
    assert_eq!((m.calls, m.succeeded, m.failed, m.rejected), (9, 6, 3, 0));
    assert_eq!(m.window_calls, 9);
    assert!((m.failure_rate - 100.0 / 3.0).abs() < 1e-9);
    let p50 = m.p50.unwrap();
    assert!(p50 >= 5 * MS && p50 <= 20 * MS, "{p50:?}");
    assert!(m.time_in_state >= secs(2));
    assert_eq!(m.times_opened, 0);
    assert!(!m.stuck);
}

/// `Registry::keyed` takes any template, one on the stack too: a template dropped and another
/// built at the same address with other settings is still compared, and its conflict counted.
#[tokio::test(start_paused = true)]
async fn a_template_built_where_another_was_is_still_compared() {
    #[inline(never)]
    fn conflicts_after_lookup(window: u32) -> u64 {
        let template = Breaker::builder("reg-keyed-stack")
            .window_calls(window)
            .config()
            .unwrap();
        registry().keyed(&template, &1).metrics().conflicts
    }
    assert_eq!(conflicts_after_lookup(2), 0);
    assert_eq!(conflicts_after_lookup(2), 0);
    assert_eq!(
        conflicts_after_lookup(9),
        1,
        "other settings, maybe the same address"
    );
    assert_eq!(conflicts_after_lookup(9), 2);
    assert_eq!(
        conflicts_after_lookup(2),
        2,
        "the first settings are no conflict"
    );
}

#[tokio::test(start_paused = true)]
async fn a_keyed_template_with_other_settings_is_still_reported_after_the_fast_path() {
    let first = Breaker::builder("reg-keyed-conflict")
        .window_calls(2)
        .config()
        .unwrap();
    let other = Breaker::builder("reg-keyed-conflict")
        .window_calls(9)
        .config()
        .unwrap();
    for _ in 0..3 {
        assert_eq!(
            registry().keyed(&first, &1).config().window(),
            first.window()
        );
    }
    let b = registry().keyed(&other, &1);
    assert_eq!(
        b.config().window(),
        first.window(),
        "the first settings are kept"
    );
    assert_eq!(b.metrics().conflicts, 1);
    registry().keyed(&first, &1);
    assert_eq!(
        b.metrics().conflicts,
        1,
        "the matching template is not a conflict"
    );
}

/// A review: `search/eu` as a plain breaker's name beside a breaker keyed under `search` made
/// two breakers of one name, silently. Names are data (a `/` is allowed), so nothing is
/// refused; the clash is counted in the plain one's `conflicts` (and logged at ERROR), in
/// either order of creation.
#[test]
fn a_plain_name_under_a_keyed_name_is_a_counted_conflict() {
    let plain = Breaker::builder("reg-shared/eu").build().unwrap();
    assert_eq!(plain.metrics().conflicts, 0);
    let keyed = Breaker::builder("reg-shared").config().unwrap();
    let _ = registry().keyed(&keyed, &"eu");
    assert_eq!(
        plain.metrics().conflicts,
        1,
        "keyed name made after the plain one"
    );

    let keyed = Breaker::builder("reg-shared-2").config().unwrap();
    let _ = registry().keyed(&keyed, &"us");
    let plain = Breaker::builder("reg-shared-2/us").build().unwrap();
    assert_eq!(
        plain.metrics().conflicts,
        1,
        "plain one made after the keyed name"
    );
    let unrelated = Breaker::builder("reg-shared-3/x").build().unwrap();
    assert_eq!(unrelated.metrics().conflicts, 0);
}
