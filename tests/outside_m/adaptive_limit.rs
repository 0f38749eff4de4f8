//! Issue 17: "when the dependency slows, the limit shrinks before the callers' workers fill;
//! when it recovers, the limit grows back" (within 30 s), visible while it moves.

use super::*;

/// A report dependency behind a timeout and an adaptive limit (the breaker never opens here:
/// `min_calls` is out of reach, so only the bulkhead acts).
#[breaker(
    name = "om-report",
    timeout = "3s",
    window_calls = 1000,
    min_calls = 1000
)]
#[bulkhead(
    name = "om-report-pool",
    limit = "adaptive",
    min_pool = 2,
    max_pool = 40,
    pool = 20
)]
async fn report(client: &reqwest::Client, url: &str) -> Result<(), DepError> {
    fetch(client, url).await
}

/// The service: 20 workers (say, database connections) that every request holds for its whole
/// duration, shared by `/report` (which calls the dependency) and `/fast` (which does not).
struct Service {
    workers: Semaphore,
    in_use: AtomicUsize,
    peak: AtomicUsize,
    client: reqwest::Client,
    dep_url: String,
}

const WORKERS: usize = 20;

/// A worker held, counted while held.
struct Worker<'a> {
    svc: &'a Service,
    _permit: tokio::sync::SemaphorePermit<'a>,
}

impl Service {
    async fn worker(&self) -> Worker<'_> {
        let permit = self.workers.acquire().await.unwrap();
        let n = self.in_use.fetch_add(1, SeqCst) + 1;
        self.peak.fetch_max(n, SeqCst);
        Worker {
            svc: self,
            _permit: permit,
        }
    }
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        self.svc.in_use.fetch_sub(1, SeqCst);
    }
}

async fn report_route(Shared(svc): Shared<Arc<Service>>) -> StatusCode {
    let _w = svc.worker().await;
    match report(&svc.client, &svc.dep_url).await {
        Ok(()) => StatusCode::OK,
        Err(_) => StatusCode::SERVICE_UNAVAILABLE,
    }
}

async fn fast_route(Shared(svc): Shared<Arc<Service>>) -> StatusCode {
    let _w = svc.worker().await;
    sleep(ms(2)).await;
    StatusCode::OK
}

/// GETs `url` every `every` until `stop`, keeping how long each answer took and whether it was
/// a 200.
fn http_load(
    client: reqwest::Client,
    url: String,
    every: Duration,
    stop: Arc<AtomicBool>,
    answers: Arc<Mutex<Vec<(Duration, bool)>>>,
) -> Load {
    open_loop(
        every,
        stop,
        Arc::new(move || {
            let (client, url, answers) = (client.clone(), url.clone(), answers.clone());
            Box::pin(async move {
                let at = Instant::now();
                let ok =
                    matches!(client.get(&url).send().await, Ok(r) if r.status() == StatusCode::OK);
                answers.lock().unwrap().push((at.elapsed(), ok));
            })
        }),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adaptive_limit_shrinks_before_the_workers_fill_and_grows_back_within_30_s() {
    let log = log();
    let dep = Dep::new(40);
    let svc = Arc::new(Service {
        workers: Semaphore::new(WORKERS),
        in_use: AtomicUsize::new(0),
        peak: AtomicUsize::new(0),
        client: reqwest::Client::new(),
        dep_url: dependency(&dep).await,
    });
    let app = Router::new()
        .route("/report", get(report_route))
        .route("/fast", get(fast_route))
        .with_state(svc.clone())
        .nest("/fusebox", fusebox::admin::router(TOKEN).unwrap());
    let base = serve(app).await;
    let admin = format!("{base}/fusebox");
    let pool = registry()
        .bulkhead("om-report-pool")
        .expect("listed before its first call");
    let client = reqwest::Client::new();

    let t0 = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    // The limit as the process sees it, and as an operator sees it over the admin JSON.
    let seen = Arc::new(Mutex::new(Vec::<(Instant, usize)>::new()));
    let seen_http = Arc::new(Mutex::new(Vec::<(Instant, usize)>::new()));
    let watchers = [
        tokio::spawn({
            let (pool, seen, stop) = (pool.clone(), seen.clone(), stop.clone());
            async move {
                while !stop.load(SeqCst) {
                    seen.lock().unwrap().push((Instant::now(), pool.pool()));
                    sleep(ms(10)).await;
                }
            }
        }),
        tokio::spawn({
            let (client, admin, seen, stop) = (
                client.clone(),
                admin.clone(),
                seen_http.clone(),
                stop.clone(),
            );
            async move {
                while !stop.load(SeqCst) {
                    let row = admin_bulkhead(&client, &admin, "om-report-pool").await;
                    let limit = row["pool"].as_u64().unwrap() as usize;
                    seen.lock().unwrap().push((Instant::now(), limit));
                    sleep(ms(100)).await;
                }
            }
        }),
    ];
    let (reports, fasts) = (Arc::default(), Arc::new(Mutex::new(Vec::new())));
    let loads = [
        http_load(
            client.clone(),
            format!("{base}/report"),
            ms(10),
            stop.clone(),
            reports,
        ),
        http_load(
            client.clone(),
            format!("{base}/fast"),
            ms(10),
            stop.clone(),
            fasts.clone(),
        ),
    ];

    // Healthy for 3 s (about 30 windows: the long-term latency is learnt), then 20 times
    // slower: at 100 calls/s, 800 ms calls would need 80 workers of the 20 there are.
    sleep_until(t0 + secs(3)).await;
    let slow_at = Instant::now();
    dep.delay(800);
    sleep_until(slow_at + secs(5)).await;
    // The plateau: the limit at min_pool, the same in metrics(), the JSON and Prometheus.
    let before = pool.pool();
    let text = admin_get(&client, &admin, "/metrics").await;
    let json_row = admin_bulkhead(&client, &admin, "om-report-pool").await;
    let after = pool.pool();
    let m = pool.metrics();
    sleep_until(slow_at + secs(6)).await;
    let healed_at = Instant::now();
    dep.delay(40);
    // Until the full limit is back (the issue: within 30 s of the recovery), and a second more.
    let mut back_at = None;
    while healed_at.elapsed() < secs(30) {
        if pool.pool() >= 20 {
            back_at = Some(Instant::now());
            break;
        }
        sleep(ms(10)).await;
    }
    sleep(secs(1)).await;
    stop.store(true, SeqCst);
    for w in watchers {
        w.await.unwrap();
    }
    for load in loads {
        load.drain().await;
    }
    let history = pool.metrics().adaptive.expect("adaptive").history;

    let seen = std::mem::take(&mut *seen.lock().unwrap());
    let seen_http = std::mem::take(&mut *seen_http.lock().unwrap());
    let during = |from: Instant, to: Instant, xs: &[(Instant, usize)]| -> Vec<usize> {
        xs.iter()
            .filter(|(t, _)| *t >= from && *t < to)
            .map(|(_, l)| *l)
            .collect()
    };
    let first_at_most = |limit: usize| {
        seen.iter()
            .find(|(t, l)| *t >= slow_at && *l <= limit)
            .map(|(t, _)| *t - slow_at)
    };
    let healthy = during(t0 + secs(1), slow_at, &seen);
    let fast = std::mem::take(&mut *fasts.lock().unwrap());
    let fast_ok = fast.iter().filter(|(_, ok)| *ok).count();
    let fast_p99 = percentile(fast.iter().map(|(d, _)| *d).collect(), 0.99);
    let back_in = back_at.map(|t| t - healed_at);
    let peak = svc.peak.load(SeqCst);
    eprintln!(
        "issue 17 real run: healthy limit {:?}..={:?}; after the slowdown: halved in {:?}, \
         min_pool in {:?}; workers peak {peak}/{WORKERS} (bulkhead peak {}); /fast {fast_ok}/{} \
         answered, p99 {fast_p99:?}; full limit back {back_in:?} after the recovery; \
         admin JSON saw {:?}; history {:?}",
        healthy.iter().min(),
        healthy.iter().max(),
        first_at_most(10),
        first_at_most(2),
        m.peak,
        fast.len(),
        seen_http.iter().map(|(_, l)| *l).collect::<Vec<_>>(),
        history.iter().map(|c| c.limit).collect::<Vec<_>>(),
    );

    // Slowed: the limit shrinks before the callers' workers fill. Not one moment with all 20
    // workers taken, so the route that never calls the dependency kept answering at once.
    assert!(peak < WORKERS, "all {WORKERS} workers were taken");
    assert_eq!(fast_ok, fast.len(), "/fast not all answered");
    assert!(fast_p99 <= ms(250), "/fast p99 {fast_p99:?}");
    // Halved within 4 windows of the new latency (the rustdoc's bound), a window being at least
    // one 800 ms call long; then down to min_pool while the dependency stays slow.
    let halved = first_at_most(10).expect("the limit never halved");
    assert!(halved <= ms(4 * 800), "halved {halved:?} into the slowdown");
    assert!(
        first_at_most(2).is_some(),
        "never down to min_pool while 20x slower"
    );
    // Visible while it moves: at the plateau the process, the admin JSON and Prometheus agree.
    assert_eq!((before, after), (2, 2), "at min_pool 5 s into the slowdown");
    assert_eq!(m.pool, 2);
    assert_eq!(json_row["pool"], 2, "{json_row}");
    assert_eq!(json_row["adaptive"]["min_pool"], 2, "{json_row}");
    assert_eq!(gauge(&text, "fusebox_bulkhead_pool", "om-report-pool"), 2.0);
    assert_eq!(
        gauge(&text, "fusebox_bulkhead_limit_min", "om-report-pool"),
        2.0
    );
    assert!(
        gauge(
            &text,
            "fusebox_bulkhead_limit_changes_total",
            "om-report-pool"
        ) >= 2.0
    );
    // An operator polling the admin JSON saw it go down and come back.
    assert!(
        during(slow_at, healed_at, &seen_http).contains(&2),
        "{seen_http:?}"
    );
    assert!(seen_http.last().unwrap().1 >= 20, "{seen_http:?}");
    // Recovered: the full limit back within 30 s of the dependency's recovery.
    let back_in =
        back_in.unwrap_or_else(|| panic!("limit {} 30 s after the recovery", pool.pool()));
    assert!(back_in <= secs(30), "{back_in:?}");
    // Its recent history shows the fall to min_pool and the climb back, step by step.
    let limits: Vec<usize> = history.iter().map(|c| c.limit).collect();
    let low = limits
        .iter()
        .rposition(|l| *l == 2)
        .expect("min_pool in the history");
    let climb = &limits[low..];
    assert!(
        climb.windows(2).all(|w| w[1] > w[0]) && climb.len() >= 3 && *climb.last().unwrap() >= 20,
        "a climb from 2 back to 20 in steps: {limits:?}"
    );
    // Logged: every change at DEBUG, the collapse to min_pool at WARN.
    assert!(log.count(Level::WARN, "om-report-pool", "collapsed to min_pool") >= 1);
    let debug = log.count(Level::DEBUG, "om-report-pool", "bulkhead limit");
    assert!(
        debug >= 2,
        "{debug} DEBUG lines: {:?}",
        log.of("om-report-pool")
    );
}
