//! Issue 22: probes while open, then a ramp.

use super::*;

static LOOKUP_MS: AtomicU64 = AtomicU64::new(10);
static LOOKUP_DOWN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static LOOKUP_HITS: AtomicUsize = AtomicUsize::new(0);

/// What the lookup answered: the dependency (1) or the fallback (0).
const LIVE: u8 = 1;

fn later(_: Error<DepError>) -> Result<u8, DepError> {
    Ok(0)
}

/// The recovery guide's breaker, with a share-based half-open.
#[breaker(
    name = "of-lookup",
    timeout = "800ms",
    trip_p95 = "500ms",
    window_calls = 20,
    min_calls = 10,
    open_for = "60s",
    probe_every = "1s",
    half_open_window = "5s",
    half_open_pct = 50,
    ramp = "10s",
    fallback = later
)]
async fn lookup() -> Result<u8, DepError> {
    LOOKUP_HITS.fetch_add(1, SeqCst);
    tokio::time::sleep(ms(LOOKUP_MS.load(SeqCst))).await;
    if LOOKUP_DOWN.load(SeqCst) {
        Err(DepError::Down)
    } else {
        Ok(LIVE)
    }
}

/// Ten calls a second from ten callers for `span`: (answered live, answered by the fallback).
async fn traffic(span: Duration) -> (usize, usize) {
    let mut live = 0;
    let mut fallback = 0;
    let end = tokio::time::Instant::now() + span;
    while tokio::time::Instant::now() < end {
        let calls: Vec<_> = (0..10).map(|_| tokio::spawn(lookup())).collect();
        advance(ms(100)).await;
        for c in calls {
            // A call still running is cut at its timeout: give it that long.
            match tokio::time::timeout(secs(1), c).await.unwrap().unwrap() {
                Ok(LIVE) => live += 1,
                Ok(_) => fallback += 1,
                Err(e) => panic!("the fallback answers every refusal: {e:?}"),
            }
        }
    }
    (live, fallback)
}

/// The "slow under the timeout" case with probing on: probes that are slow by the rule never
/// pass, so the breaker stays open while the dependency stays slow, then follows it back in
/// seconds (well before `open_for`), through half-open and a ramp, with no relapse.
#[tokio::test(start_paused = true)]
async fn probing_never_closes_on_a_dependency_slow_under_its_timeout_and_follows_it_back() {
    let b = registry().breaker("of-lookup").unwrap();
    LOOKUP_MS.store(700, SeqCst);
    traffic(secs(3)).await;
    assert_eq!(
        b.state(),
        State::Open,
        "700 ms calls breach trip_p95 = 500ms"
    );
    let opened = b.metrics().times_opened;

    // Slow for 40 s under the 800 ms timeout: probes go through, none passes.
    let hits = LOOKUP_HITS.load(SeqCst);
    for _ in 0..40 {
        traffic(secs(1)).await;
        assert_eq!(b.state(), State::Open, "a slow probe never passes");
    }
    let probes = LOOKUP_HITS.load(SeqCst) - hits;
    assert!(
        (30..=41).contains(&probes),
        "about one probe a second: {probes}"
    );
    assert_eq!(
        b.metrics().times_opened,
        opened,
        "no relapse, no new period"
    );

    // Healthy again (40 s in, 20 s before open_for ends): half-open within a probe or two,
    // then the ramp, then all traffic, well before open_for would have let anyone look.
    LOOKUP_MS.store(10, SeqCst);
    let mut closed_at = None;
    let mut plain_at = None;
    for s in 1..=18 {
        traffic(secs(1)).await;
        if closed_at.is_none() && b.state() == State::Closed {
            closed_at = Some(s);
        }
        if closed_at.is_some() && b.ramp_share().is_none() {
            plain_at = Some(s);
            break;
        }
    }
    let closed_at = closed_at.expect("closed within 18 s of the recovery");
    assert!(closed_at <= 8, "closed {closed_at} s after the recovery");
    assert!(plain_at.is_some(), "the ramp is over within 18 s");
    assert_eq!(b.metrics().times_opened, opened, "no relapse");
    let (live, fallback) = traffic(secs(2)).await;
    assert!(
        live >= 150 && fallback == 0,
        "all traffic back: {live} live, {fallback} fallbacks"
    );
}

/// While a breaker ramps, `ramp_share` is in `metrics()`, the JSON and Prometheus, it reads
/// `closed`, and a refused call is answered by the fallback as a `Closed` rejection.
/// Opens `b` (a window of 4, all failed), waits out its 5 s open period and passes its one
/// trial: closed again, ramping if it has a ramp.
pub(crate) async fn open_then_pass_the_trial(b: &Breaker) {
    for _ in 0..4 {
        let _ = b.call(async { Err::<(), _>("down") }).await;
    }
    assert_eq!(b.state(), State::Open);
    advance(secs(5)).await;
    b.call(async { Ok::<_, &str>(()) }).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_ramping_breaker_shows_its_share_everywhere_and_refuses_as_closed() {
    let b = Breaker::builder("of-ramp-show")
        .window_calls(4)
        .min_calls(4)
        .open_for(secs(5))
        .half_open_calls(1)
        .ramp(secs(100))
        .build()
        .unwrap();
    open_then_pass_the_trial(&b).await;
    assert_eq!(b.state(), State::Closed);
    let share = b.ramp_share().expect("ramping");
    assert!((0.0..0.2).contains(&share), "{share}");

    let mut refused = 0;
    for _ in 0..20 {
        match b.call(async { Ok::<_, &str>(()) }).await {
            Err(Error::Rejected(r)) => {
                assert!(r.is_ramp(), "{r:?}");
                assert!(
                    matches!(
                        r,
                        Rejection::Open {
                            state: State::Closed,
                            ..
                        }
                    ),
                    "{r:?}"
                );
                refused += 1;
            }
            other => assert!(other.is_ok(), "{other:?}"),
        }
    }
    assert!(
        refused >= 15,
        "a ramp at ~5 % refuses most calls: {refused}"
    );
    assert_eq!(b.metrics().rejected_by_reason.ramp, refused);

    let json = serde_json::to_value(fusebox::metrics()).unwrap();
    let row = json["breakers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "of-ramp-show")
        .unwrap()
        .clone();
    assert_eq!(row["state"], "closed");
    assert!(row["ramp_share"].as_f64().is_some(), "{row}");
    let text = fusebox::metrics().to_prometheus();
    let line = text
        .lines()
        .find(|l| l.starts_with("fusebox_breaker_ramp_share") && l.contains("of-ramp-show"))
        .expect("the ramp gauge");
    let v: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!((0.0..0.2).contains(&v), "{line}");

    // The ramp ends by itself after its span, even with no call in between.
    advance(secs(101)).await;
    assert_eq!(b.ramp_share(), None);
    assert_eq!(b.metrics().ramp_share, None);
}
