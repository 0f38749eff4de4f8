//! Issue 17's stall guard (the `Bulkhead` rustdoc's "Adaptive limit"): calls that keep starting
//! while none ends are cut to the calls in flight; slow calls that keep ending never trip it.

use super::*;

/// A dependency that will stop answering (its calls end at the 2 s timeout).
#[breaker(
    name = "om-hang",
    timeout = "2s",
    window_calls = 1000,
    min_calls = 1000
)]
#[bulkhead(name = "om-hang-pool", limit = "adaptive")]
async fn hanging(client: &reqwest::Client, url: &str) -> Result<(), DepError> {
    fetch(client, url).await
}

/// A dependency that is slow from the start, and stays so.
#[breaker(
    name = "om-steady",
    timeout = "2s",
    window_calls = 1000,
    min_calls = 1000
)]
#[bulkhead(name = "om-steady-pool", limit = "adaptive")]
async fn steady(client: &reqwest::Client, url: &str) -> Result<(), DepError> {
    fetch(client, url).await
}

/// `call(client, url)` every 20 ms (50 calls/s) until `stop`, counting refusals by the pool.
fn calls_at_50_a_second<F, Fut>(
    f: F,
    url: String,
    stop: Arc<AtomicBool>,
    refused: Arc<AtomicUsize>,
) -> Load
where
    F: Fn(reqwest::Client, String) -> Fut + Send + Sync + Copy + 'static,
    Fut: Future<Output = Result<(), DepError>> + Send + 'static,
{
    let client = reqwest::Client::new();
    open_loop(
        ms(20),
        stop,
        Arc::new(move || {
            let (client, url, refused) = (client.clone(), url.clone(), refused.clone());
            Box::pin(async move {
                if let Err(DepError::Unavailable(Rejection::Full { .. })) = f(client, url).await {
                    refused.fetch_add(1, SeqCst);
                }
            })
        }),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dependency_that_stops_answering_holds_a_handful_of_slots_and_slow_calls_none() {
    let log = log();
    let (hang, slow) = (Dep::new(20), Dep::new(300));
    let (hang_url, slow_url) = (dependency(&hang).await, dependency(&slow).await);
    let hang_pool = registry().bulkhead("om-hang-pool").unwrap();
    let slow_pool = registry().bulkhead("om-steady-pool").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let (hang_refused, slow_refused) =
        (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let loads = [
        calls_at_50_a_second(
            |c, u| async move { hanging(&c, &u).await },
            hang_url,
            stop.clone(),
            hang_refused.clone(),
        ),
        calls_at_50_a_second(
            |c, u| async move { steady(&c, &u).await },
            slow_url,
            stop.clone(),
            slow_refused.clone(),
        ),
    ];
    let slow_lowest = Arc::new(AtomicUsize::new(usize::MAX));
    let watch = tokio::spawn({
        let (pool, lowest, stop) = (slow_pool.clone(), slow_lowest.clone(), stop.clone());
        async move {
            while !stop.load(SeqCst) {
                lowest.fetch_min(pool.pool(), SeqCst);
                sleep(ms(10)).await;
            }
        }
    });

    // Healthy for 2 s, then the dependency stops answering for 3 s (every call waits out its
    // 2 s timeout), then answers in 20 ms again.
    sleep(secs(2)).await;
    let before = hang_pool.metrics().peak;
    hang.delay(10_000);
    sleep(secs(3)).await;
    let peak = hang_pool.metrics().peak;
    let cut_to = hang_pool.pool();
    hang.delay(20);
    let healed_at = Instant::now();
    let mut back_in = None;
    while healed_at.elapsed() < secs(30) {
        if hang_pool.pool() >= 20 {
            back_in = Some(healed_at.elapsed());
            break;
        }
        sleep(ms(10)).await;
    }
    stop.store(true, SeqCst);
    watch.await.unwrap();
    for load in loads {
        load.drain().await;
    }
    let history: Vec<usize> = hang_pool
        .metrics()
        .adaptive
        .unwrap()
        .history
        .iter()
        .map(|c| c.limit)
        .collect();
    let slow_m = slow_pool.metrics();
    eprintln!(
        "stall guard real run: peak in flight {before} healthy, {peak} once it stopped answering \
         (limit {cut_to} 3 s in, {} refused); full limit back {back_in:?} after; history {history:?}; \
         steady 300 ms: lowest limit {}, {} refused, peak {}, limit now {}",
        hang_refused.load(SeqCst),
        slow_lowest.load(SeqCst),
        slow_refused.load(SeqCst),
        slow_m.peak,
        slow_m.pool,
    );

    // Stopped answering: after 100 ms without an end (5 calls at 50/s, 6 or 7 with the calls
    // that were answering), no more calls are let in than are already waiting. A loaded
    // machine may deliver a few late ticks at once: at most half of the limit, never the limit.
    assert!(before <= 5, "healthy peak {before}");
    assert!(
        peak <= 10,
        "{peak} calls in flight into a dependency that stopped answering"
    );
    assert!(
        log.count(Level::DEBUG, "om-hang-pool", "cut to the calls in flight") >= 1,
        "the guard's cut is logged at DEBUG"
    );
    assert!(
        cut_to < 20,
        "the limit stays cut while the dependency hangs: {cut_to}"
    );
    // Answering again: the full limit is back within 30 s (the bound).
    let back_in = back_in.unwrap_or_else(|| panic!("limit {} 30 s on", hang_pool.pool()));
    assert!(back_in <= secs(30), "{back_in:?}");
    // Slow calls that keep ending (300 ms from the start, 15 in flight of 20) are no stall:
    // not one refused, the limit never below where it started.
    assert_eq!(slow_refused.load(SeqCst), 0, "steady slow calls refused");
    assert!(
        slow_lowest.load(SeqCst) >= 20,
        "steady slow calls cut the limit"
    );
    assert_eq!(
        log.count(Level::DEBUG, "om-steady-pool", "cut to the calls in flight"),
        0
    );
}
