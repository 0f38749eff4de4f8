//! Issue 26: a breaker given only the dependency's timeout (or the card's line): a slow or
//! failing dependency is shed and back within seconds, and healthy noise opens nothing.

use super::*;

/// Where a call's answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Dependency,
    Fallback,
}

fn by_fallback(_: Error<ApiError>) -> Result<Answer, ApiError> {
    Ok(Answer::Fallback)
}

/// The dependency's latency for calls starting now, in milliseconds (one per test).
static CARD_DELAY: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(20);
static ALONE_DELAY: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(20);

async fn answer_after(delay: &std::sync::atomic::AtomicU64) -> Result<Answer, ApiError> {
    tokio::time::sleep(ms(delay.load(SeqCst))).await;
    Ok(Answer::Dependency)
}

#[breaker(name = "oa-card", trip_p95 = "300ms", timeout = "2s", fallback = by_fallback)]
#[bulkhead(name = "oa-card-pool", pool = 5)]
async fn pay_card() -> Result<Answer, ApiError> {
    answer_after(&CARD_DELAY).await
}

#[breaker(name = "oa-alone", timeout = "2s", fallback = by_fallback)]
#[bulkhead(name = "oa-alone-pool", pool = 5)]
async fn pay_alone() -> Result<Answer, ApiError> {
    answer_after(&ALONE_DELAY).await
}

/// Issue 26's real run on a paused clock: 50 calls a second, open loop; the dependency
/// answers in 20 ms, then in 8 s for 25 s, then in 20 ms again. Returns the time from the
/// slowdown to the breaker's first opening, and the time from the healing to the last call
/// the fallback answered (after it, all traffic is back).
async fn slowdown<F, Fut>(
    name: &str,
    delay: &'static std::sync::atomic::AtomicU64,
    call: F,
) -> (Duration, Duration)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Answer, ApiError>> + Send + 'static,
{
    let breaker = registry().breaker(name).unwrap();
    let start = tokio::time::Instant::now();
    let (slow_at, heal_at, end) = (secs(10), secs(35), secs(60));
    let mut calls = Vec::new();
    let mut opened = None;
    let mut tick = tokio::time::interval(ms(20));
    loop {
        tick.tick().await;
        let t = start.elapsed();
        if t >= end {
            break;
        }
        delay.store(
            if (slow_at..heal_at).contains(&t) {
                8000
            } else {
                20
            },
            SeqCst,
        );
        if opened.is_none() && t >= slow_at && breaker.state() == State::Open {
            opened = Some(t - slow_at);
        }
        let fut = call();
        calls.push((t, tokio::spawn(fut)));
    }
    let mut last_fallback = None;
    for (t, h) in calls {
        let a = h.await.unwrap();
        assert!(
            t >= slow_at || a == Ok(Answer::Dependency),
            "healthy at {t:?}: {a:?}"
        );
        if a == Ok(Answer::Fallback) {
            last_fallback = Some(t);
        }
    }
    let back = last_fallback.map_or(Duration::ZERO, |t| t.saturating_sub(heal_at));
    let opened = opened.expect("never opened");
    eprintln!(
        "{name}: opened {opened:?} into the slowdown, all traffic back {back:?} after healing"
    );
    (opened, back)
}

/// The table: behind a pool of 5, open within 3 s, all traffic back within 15 s of
/// the healing, with the card's line and with the timeout alone.
#[tokio::test(start_paused = true)]
async fn slow_behind_a_small_bulkhead_opens_fast_and_comes_back_fast() {
    let (open, back) = slowdown("oa-card", &CARD_DELAY, pay_card).await;
    assert!(
        open <= secs(3) && back <= secs(15),
        "card's line: open {open:?}, back {back:?}"
    );
    let (open, back) = slowdown("oa-alone", &ALONE_DELAY, pay_alone).await;
    assert!(
        open <= secs(3) && back <= secs(15),
        "timeout alone: open {open:?}, back {back:?}"
    );
}

/// A tiny deterministic generator (xorshift), so the noise is the same on every run.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[breaker(name = "oa-noise", timeout = "800ms")]
async fn noisy(latency: Duration, fail: bool) -> Result<Answer, ApiError> {
    tokio::time::sleep(latency).await;
    if fail {
        Err(ApiError::Down)
    } else {
        Ok(Answer::Dependency)
    }
}

/// The table's last row: an hour of a healthy dependency with 1 % random errors and ±20 %
/// latency jitter (100 ms usually) opens nothing, with the timeout alone.
#[tokio::test(start_paused = true)]
async fn an_hour_of_healthy_noise_opens_nothing() {
    let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
    let mut tick = tokio::time::interval(ms(100));
    let mut calls = Vec::new();
    for _ in 0..36_000 {
        tick.tick().await;
        let latency = ms(80 + noise.next() % 41);
        let fail = noise.next() % 100 == 0;
        calls.push(tokio::spawn(noisy(latency, fail)));
        // Keep the spawned set small: each call is over within its 120 ms.
        if calls.len() >= 100 {
            for c in calls.drain(..) {
                let _ = c.await.unwrap();
            }
        }
    }
    for c in calls {
        let _ = c.await.unwrap();
    }
    let m = metrics("oa-noise");
    assert_eq!((m.times_opened, m.state), (0, State::Closed));
    assert!(m.failed > 300, "the noise was there: {} failures", m.failed);
}

static REACHED_WHILE_DOWN: AtomicU32 = AtomicU32::new(0);

#[breaker(name = "oa-down", timeout = "800ms", fallback = by_fallback)]
async fn sometimes_down(down: bool) -> Result<Answer, ApiError> {
    tokio::time::sleep(ms(30)).await;
    if down {
        REACHED_WHILE_DOWN.fetch_add(1, SeqCst);
        Err(ApiError::Down)
    } else {
        Ok(Answer::Dependency)
    }
}

/// DESIGN's "the obvious line is the right line" on a dependency that refuses for two
/// minutes at 20 calls a second: the timeout alone opens within 3 s (half of the last 100
/// calls failing), sends the dead dependency a few calls a second at most, and has all
/// traffic back within 10 s of the recovery (1 s probes, a 2 s half-open, a 5 s ramp).
#[tokio::test(start_paused = true)]
async fn a_failing_dependency_is_shed_within_seconds_and_back_within_seconds() {
    let breaker = registry().breaker("oa-down").unwrap();
    let start = tokio::time::Instant::now();
    let (down_at, up_at, end) = (secs(5), secs(125), secs(160));
    let mut tick = tokio::time::interval(ms(50));
    let (mut opened, mut calls) = (None, Vec::new());
    loop {
        tick.tick().await;
        let t = start.elapsed();
        if t >= end {
            break;
        }
        if opened.is_none() && breaker.state() == State::Open {
            opened = Some(t - down_at);
        }
        let down = (down_at..up_at).contains(&t);
        calls.push((t, tokio::spawn(sometimes_down(down))));
    }
    let mut last_fallback_after_up = Duration::ZERO;
    for (t, c) in calls {
        let a = c.await.unwrap().unwrap();
        if t >= up_at && a == Answer::Fallback {
            last_fallback_after_up = t - up_at;
        }
    }
    let opened = opened.expect("never opened");
    let reached = REACHED_WHILE_DOWN.load(SeqCst);
    eprintln!("oa-down: opened {opened:?} after the outage began, {reached} of 2400 calls reached it while down, all traffic back {last_fallback_after_up:?} after it ended");
    assert!(
        opened <= secs(3),
        "opened {opened:?} after the outage began"
    );
    // Those before it opened, then about one probe a second.
    assert!(
        reached <= 50 + 2 * 120,
        "{reached} calls reached the dead dependency"
    );
    assert!(
        last_fallback_after_up <= secs(10),
        "all traffic back {last_fallback_after_up:?} after the recovery"
    );
}
