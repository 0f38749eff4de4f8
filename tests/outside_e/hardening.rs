//! Issue 18: keys, abandoned trials, sibling panics.

use super::*;

#[breaker(name = "oe-hosts", key = host, max_keys = 100, window = "1s", min_calls = 2)]
async fn fetch(host: String, ok: bool) -> Result<(), DepError> {
    ok.then_some(()).ok_or(DepError::Down)
}

fn family(base: &str) -> Vec<String> {
    registry()
        .breakers()
        .into_iter()
        .map(|b| b.name().to_owned())
        .filter(|n| n.starts_with(&format!("{base}/")))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn ten_thousand_hosts_all_go_through_on_at_most_a_hundred_and_one_breakers() {
    for i in 0..10_000 {
        fetch(format!("host-{i}.example"), true)
            .await
            .expect("never refused because of the cap");
        if i % 1000 == 0 {
            // A sick host keeps its own breaker through the stream.
            let _ = fetch("sick".into(), false).await;
        }
    }
    let names = family("oe-hosts");
    assert!(names.len() <= 101, "{} breakers", names.len());
    let m = fusebox::metrics();
    let keyed = m
        .keyed
        .iter()
        .find(|k| k.name == "oe-hosts")
        .expect("keyed figures");
    assert!(keyed.overflowed > 0, "{keyed:?}");
    // Idle keys make room once their window is empty: a new key gets its own breaker again.
    advance(secs(2)).await;
    fetch("fresh.example".into(), true).await.unwrap();
    assert!(registry().breaker("oe-hosts/fresh.example").is_some());
}

#[tokio::test(start_paused = true)]
async fn request_keys_never_reach_a_name_verbatim() {
    for key in ["a\nb", "x/open", "_overflow", "\u{1b}[31mred", "%2F"] {
        fetch(key.into(), true).await.unwrap();
    }
    let long = "k".repeat(300);
    fetch(long.clone(), true).await.unwrap();
    let names = family("oe-hosts");
    for n in &names {
        let key = &n["oe-hosts/".len()..];
        assert!(
            !key.contains('/') && !key.chars().any(char::is_control),
            "{n:?}"
        );
        assert!(key.len() <= 128, "{n:?} is {} bytes", key.len());
    }
    assert!(registry().breaker("oe-hosts/a%0Ab").is_some(), "{names:?}");
    assert!(
        registry().breaker("oe-hosts/x%2Fopen").is_some(),
        "{names:?}"
    );
    assert!(
        registry().breaker("oe-hosts/%5Foverflow").is_some(),
        "{names:?}"
    );
    assert!(registry().breaker("oe-hosts/%252F").is_some(), "{names:?}");
    assert!(names
        .iter()
        .any(|n| n.starts_with("oe-hosts/kkkk") && n.contains('~')));
}

#[breaker(
    name = "oe-hang",
    trip_p95 = "20ms",
    open_for = "1s",
    half_open_calls = 3,
    window_calls = 20,
    min_calls = 10
)]
async fn hangs() -> Result<(), DepError> {
    pending().await
}

#[tokio::test(start_paused = true)]
async fn trials_the_caller_abandons_are_judged_and_the_breaker_reopens() {
    let mut events = registry().subscribe();
    // 20 calls a second, each given up after 50 ms by its caller, for 10 s.
    for _ in 0..200 {
        let next = tokio::time::Instant::now() + ms(50);
        let _ = tokio::time::timeout(ms(50), hangs()).await;
        tokio::time::sleep_until(next).await;
    }
    let b = registry().breaker("oe-hang").unwrap();
    let m = b.metrics();
    let mut reopened = 0;
    while let Ok(t) = events.try_recv() {
        if &*t.name == "oe-hang" && t.from == State::HalfOpen && t.to == State::Open {
            reopened += 1;
        }
    }
    assert!(
        reopened >= 3,
        "abandoned slow trials reopen the breaker: {reopened}, {m:?}"
    );
    let let_through = m.cancelled;
    assert!(
        let_through < 60,
        "{let_through} of 200 calls let through: {m:?}"
    );
    assert_eq!(
        m.failed + m.timed_out,
        0,
        "dropped before the trial timeout: no failure"
    );
}

#[breaker(
    name = "oe-sibling",
    window_calls = 2,
    min_calls = 2,
    open_for = "1s",
    half_open_calls = 1
)]
async fn sibling_call(gate: Arc<Notify>) -> Result<(), DepError> {
    gate.notified().await;
    Ok(())
}

#[test]
fn a_siblings_panic_is_not_blamed_on_the_dependency() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let b = registry().breaker("oe-sibling").unwrap();
    rt.block_on(async {
        let r = tokio::spawn(async {
            let gate = Arc::new(Notify::new());
            let boom = async {
                tokio::task::yield_now().await;
                panic!("an unrelated branch panics");
            };
            let _: ((), Result<(), DepError>) = tokio::join!(boom, sibling_call(gate));
        })
        .await;
        assert!(r.unwrap_err().is_panic());
    });
    let m = b.metrics();
    assert_eq!((m.panicked, m.failed, m.cancelled), (0, 0, 1), "{m:?}");
}
