//! Keyed breakers taken from requests (`key = host`): bounded by `max_keys`, never refusing a
//! call because of the cap, keys checked like names, lookups beside a stream of new keys.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use fusebox_runtime::{export, metrics, registry, Breaker, State, OVERFLOW_KEY};

fn family_len(base: &str) -> usize {
    let prefix = format!("{base}/");
    registry()
        .breakers()
        .iter()
        .filter(|b| b.name().starts_with(&prefix))
        .count()
}

#[tokio::test(start_paused = true)]
async fn ten_thousand_hosts_with_max_keys_100_all_go_through_on_at_most_101_breakers() {
    let template = Breaker::builder("kb-hosts").max_keys(100).config().unwrap();
    let mut ok = 0;
    for i in 0..10_000 {
        let host = format!("host-{i}.example");
        let b = registry().keyed(&template, &host);
        if b.call(async { Ok::<_, ()>(()) }).await.is_ok() {
            ok += 1;
        }
    }
    assert_eq!(ok, 10_000, "the cap never refuses a call");
    assert!(family_len("kb-hosts") <= 101, "{}", family_len("kb-hosts"));
    let overflow = registry()
        .breaker(&format!("kb-hosts/{OVERFLOW_KEY}"))
        .unwrap();
    assert_eq!(overflow.metrics().succeeded, 9_900);
    let k = metrics()
        .keyed
        .into_iter()
        .find(|k| k.name == "kb-hosts")
        .unwrap();
    assert_eq!((k.keys, k.max_keys, k.overflowed), (100, 100, 9_900));
    let text = export::prometheus();
    assert!(
        text.contains("fusebox_breaker_keys_overflowed_total{breaker=\"kb-hosts\"} 9900"),
        "{text}"
    );
    // A host that got its own breaker keeps it.
    let first = registry().keyed(&template, &"host-0.example");
    assert_eq!(first.name(), "kb-hosts/host-0.example");
}

#[tokio::test(start_paused = true)]
async fn idle_keys_make_room_before_anything_overflows() {
    let template = Breaker::builder("kb-idle")
        .window(Duration::from_secs(1))
        .max_keys(10)
        .config()
        .unwrap();
    for i in 0..10 {
        let b = registry().keyed(&template, &i);
        b.call(async { Ok::<_, ()>(()) }).await.unwrap();
    }
    // Busy (calls in the window): the 11th key overflows.
    assert_eq!(registry().keyed(&template, &10).name(), "kb-idle/_overflow");
    // An open one is never idle; the others' windows empty after a second.
    registry().keyed(&template, &0).force_open();
    tokio::time::advance(Duration::from_secs(2)).await;
    // The sweep runs once per `max_keys` turned-away keys: at most 10 more overflow first.
    let mut own = 0;
    for i in 100..120 {
        let b = registry().keyed(&template, &i);
        if b.config().key() != Some(OVERFLOW_KEY) {
            own += 1;
        }
    }
    assert!(own >= 9, "idle keys were evicted to make room: {own}");
    assert!(family_len("kb-idle") <= 11);
    assert_eq!(
        registry().breaker("kb-idle/0").unwrap().state(),
        State::ForcedOpen,
        "an open breaker is never evicted by the cap"
    );
}

#[tokio::test(start_paused = true)]
async fn quiet_keys_make_room_whatever_their_window_holds() {
    // A count window never empties, and an open breaker nobody calls stays open: before,
    // such keys kept their slots for good, and every new key shared the overflow breaker,
    // where one failing key refused the others (issue 28's review).
    let template = Breaker::builder("kb-quiet")
        .window_calls(2)
        .min_calls(2)
        .open_for(Duration::from_secs(10))
        .max_keys(2)
        .config()
        .unwrap();
    registry()
        .keyed(&template, &"a")
        .call(async { Ok::<_, ()>(()) })
        .await
        .unwrap();
    let b = registry().keyed(&template, &"b");
    for _ in 0..2 {
        let _ = b.call(async { Err::<(), _>(()) }).await;
    }
    assert_eq!(b.state(), State::Open);
    // Both quiet since; "b" is still in its open period.
    tokio::time::advance(Duration::from_secs(5)).await;
    assert_eq!(
        registry().keyed(&template, &"c").name(),
        "kb-quiet/_overflow"
    );
    // 40 s on: "a" has had no call for 45 s, "b"'s period ended 35 s ago: both make room.
    tokio::time::advance(Duration::from_secs(40)).await;
    let (d, e) = (
        registry().keyed(&template, &"d"),
        registry().keyed(&template, &"e"),
    );
    assert_eq!((d.name(), e.name()), ("kb-quiet/d", "kb-quiet/e"));
    assert!(
        registry().breaker("kb-quiet/a").is_none() && registry().breaker("kb-quiet/b").is_none()
    );
}

#[tokio::test(start_paused = true)]
async fn an_open_key_nobody_calls_makes_room_once_its_period_is_long_over() {
    let template = Breaker::builder("kb-open")
        .min_calls(2)
        .open_for(Duration::from_secs(10))
        .max_keys(1)
        .config()
        .unwrap();
    let b = registry().keyed(&template, &"down");
    for _ in 0..2 {
        let _ = b.call(async { Err::<(), _>(()) }).await;
    }
    assert_eq!(b.state(), State::Open);
    tokio::time::advance(Duration::from_secs(3600)).await;
    assert_eq!(registry().keyed(&template, &"new").name(), "kb-open/new");
}

#[tokio::test(start_paused = true)]
async fn a_key_in_use_or_open_keeps_its_slot() {
    let template = Breaker::builder("kb-busy")
        .window_calls(2)
        .min_calls(2)
        .open_for(Duration::from_secs(600))
        .max_keys(2)
        .config()
        .unwrap();
    let busy = registry().keyed(&template, &"busy");
    let open = registry().keyed(&template, &"open");
    for _ in 0..2 {
        let _ = open.call(async { Err::<(), _>(()) }).await;
    }
    for _ in 0..10 {
        busy.call(async { Ok::<_, ()>(()) }).await.unwrap();
        tokio::time::advance(Duration::from_secs(10)).await;
        // A new key each time: a sweep (at most one a second) looks at both.
        let other = registry().keyed(&template, &"other");
        assert_eq!(other.name(), "kb-busy/_overflow");
    }
    assert_eq!(
        registry()
            .breaker("kb-busy/busy")
            .unwrap()
            .metrics()
            .succeeded,
        10
    );
    assert_eq!(
        registry().breaker("kb-busy/open").unwrap().state(),
        State::Open
    );
}

#[tokio::test(start_paused = true)]
async fn keys_never_reach_names_verbatim() {
    let template = Breaker::builder("kb-names").config().unwrap();
    let evil = registry().keyed(&template, &"x\n2026-12-03 INFO admin logged in");
    assert_eq!(evil.name(), "kb-names/x%0A2026-12-03 INFO admin logged in");
    let ansi = registry().keyed(&template, &"\u{1b}[2J");
    assert_eq!(ansi.config().key(), Some("%1B[2J"));
    // A `/` would make `/breakers/kb-names/a/open` ambiguous: it is encoded.
    let slash = registry().keyed(&template, &"a/open");
    assert_eq!(slash.name(), "kb-names/a%2Fopen");
    assert!(registry()
        .breaker("kb-names/a%2Fopen")
        .unwrap()
        .ptr_eq(&slash));
    // A key cannot pose as the overflow breaker.
    let posing = registry().keyed(&template, &OVERFLOW_KEY);
    assert_eq!(posing.name(), "kb-names/%5Foverflow");
    let long = registry().keyed(&template, &"k".repeat(10_000));
    assert!(long.name().len() <= "kb-names/".len() + fusebox_runtime::MAX_KEY_LEN);
    for b in registry().breakers() {
        assert!(!b.name().chars().any(char::is_control), "{:?}", b.name());
    }
    // The builder path checks keys the same way.
    let via_config = registry().register(template.with_key("a/open"));
    assert!(via_config.ptr_eq(&slash));
}

#[tokio::test(start_paused = true)]
async fn evict_keys_removes_a_whole_keyed_name_at_once() {
    let template = Breaker::builder("kb-evict").max_keys(3).config().unwrap();
    for i in 0..5 {
        registry().keyed(&template, &i).force_open();
    }
    assert_eq!(
        family_len("kb-evict"),
        4,
        "three keys and the overflow breaker"
    );
    assert_eq!(registry().evict_keys("kb-evict"), 4);
    assert_eq!(family_len("kb-evict"), 0);
    assert_eq!(registry().keyed(&template, &0).state(), State::Closed);
}

/// Hot keys keep answering while other threads pour new keys in: every lookup finds its own
/// breaker, every new key gets its own or the overflow breaker, the count stays bounded.
#[test]
fn hot_keys_beside_a_stream_of_new_keys() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let _g = rt.enter();
    let template = Arc::new(
        Breaker::builder("kb-stream")
            .max_keys(200)
            .config()
            .unwrap(),
    );
    let hot: Vec<Breaker> = (0..8)
        .map(|i| registry().keyed(&template, &format!("hot{i}")))
        .collect();
    for b in &hot {
        b.force_open(); // never idle, so never evicted
    }
    let found = Arc::new(AtomicU64::new(0));
    std::thread::scope(|s| {
        for t in 0..2 {
            let template = template.clone();
            s.spawn(move || {
                for i in 0..5_000 {
                    let b = registry().keyed(&template, &format!("new-{t}-{i}"));
                    assert!(b.name().starts_with("kb-stream/"));
                }
            });
        }
        for t in 0..2 {
            let (template, hot, found) = (template.clone(), &hot, found.clone());
            s.spawn(move || {
                for i in 0..20_000 {
                    let k = (i + t) % 8;
                    let b = registry().keyed(&template, &format!("hot{k}"));
                    assert!(b.ptr_eq(&hot[k]));
                    found.fetch_add(1, Relaxed);
                }
            });
        }
    });
    assert_eq!(found.load(Relaxed), 40_000);
    assert!(family_len("kb-stream") <= 201);
}
