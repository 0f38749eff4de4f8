//! The load and what it saw: open-loop requests to `/orders` and `/checkout`, the slowdown and
//! the healing, and every answer with when it was sent and how long it took.

use super::service::{checkout, orders, pay, serve, Payments, Shop, Variant};
use super::*;

/// One request: when it was sent (from the start of the run), how long it took, and its
/// body if it got a 200.
pub(crate) struct Sample {
    pub(crate) sent: Duration,
    pub(crate) took: Duration,
    pub(crate) body: Option<String>,
}

impl Sample {
    pub(crate) fn answered(&self) -> Duration {
        self.sent + self.took
    }
}

#[derive(Clone, Default)]
struct Samples(Arc<Mutex<Vec<Sample>>>);

/// Open loop: a request every `every`, whatever the previous ones are doing, until `stop`.
fn open_loop(
    client: reqwest::Client,
    url: String,
    every: Duration,
    t0: Instant,
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    samples: Samples,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = interval(every);
        tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
        while !stop.load(Relaxed) {
            tick.tick().await;
            sent.fetch_add(1, Relaxed);
            let (client, url, samples) = (client.clone(), url.clone(), samples.clone());
            tokio::spawn(async move {
                let at = Instant::now();
                let body = match client.get(&url).send().await {
                    Ok(r) if r.status() == StatusCode::OK => r.text().await.ok(),
                    _ => None,
                };
                let took = at.elapsed();
                let sample = Sample {
                    sent: at - t0,
                    took,
                    body,
                };
                samples.0.lock().unwrap().push(sample);
            });
        }
    })
}

/// Everything one run saw, times from the start of the run.
pub(crate) struct Run {
    pub(crate) slow_at: Duration,
    pub(crate) healed_at: Duration,
    /// Every state the breaker was seen in, with when it was first seen.
    pub(crate) states: Vec<(Duration, State)>,
    pub(crate) orders_sent: u64,
    pub(crate) orders: Vec<Sample>,
    pub(crate) checkouts_sent: u64,
    pub(crate) checkouts: Vec<Sample>,
}

pub(crate) async fn run(variant: Variant) -> Run {
    let delay = Arc::new(AtomicU64::new(20));
    let pay_url = serve(
        Router::new()
            .route("/pay", get(pay))
            .with_state(delay.clone()),
    )
    .await;
    let shop = Arc::new(Shop {
        db: Semaphore::new(20),
        pay: Payments {
            client: reqwest::Client::new(),
            url: format!("{pay_url}/pay"),
        },
        variant,
        orders: AtomicU64::new(0),
    });
    let shop_url = serve(
        Router::new()
            .route("/orders", get(orders))
            .route("/checkout", get(checkout))
            .with_state(shop),
    )
    .await;
    // Every annotated breaker is listed from the start.
    let breaker = fusebox::registry()
        .breaker(variant.breaker())
        .expect("an annotated breaker is in the registry before its first call");

    let t0 = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let states = Arc::new(Mutex::new(vec![(Duration::ZERO, breaker.state())]));
    let watch = {
        let (breaker, states, stop) = (breaker.clone(), states.clone(), stop.clone());
        tokio::spawn(async move {
            let mut tick = interval(ms(5));
            while !stop.load(Relaxed) {
                tick.tick().await;
                let now = breaker.state();
                let mut seen = states.lock().unwrap();
                if seen.last().map(|(_, s)| *s) != Some(now) {
                    seen.push((t0.elapsed(), now));
                }
            }
        })
    };
    let client = reqwest::Client::new();
    let (orders_sent, checkouts_sent) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (order_samples, checkout_samples) = (Samples::default(), Samples::default());
    let loads = [
        open_loop(
            client.clone(),
            format!("{shop_url}/orders"),
            ms(5),
            t0,
            stop.clone(),
            orders_sent.clone(),
            order_samples.clone(),
        ),
        open_loop(
            client,
            format!("{shop_url}/checkout"),
            ms(20),
            t0,
            stop.clone(),
            checkouts_sent.clone(),
            checkout_samples.clone(),
        ),
    ];

    // Each moment is read before the change, so whatever a request saw of the change, it
    // saw after that moment (the task may lose the CPU between the two on a loaded machine).
    sleep_until(t0 + HEALTHY).await;
    let slow_at = t0.elapsed();
    delay.store(8_000, Relaxed);
    sleep_until(t0 + HEALTHY + SLOW_FOR).await;
    let healed_at = t0.elapsed();
    delay.store(20, Relaxed);
    // Until all of checkout's traffic is back (closed, ramp over) and a second more, or the
    // issue's 15 s.
    let mut back_since = None;
    while t0.elapsed() < healed_at + BACK_WITHIN {
        sleep(ms(50)).await;
        let m = breaker.metrics();
        if m.state == State::Closed && m.ramp_share.is_none() {
            let since = *back_since.get_or_insert(t0.elapsed());
            if t0.elapsed() >= since + secs(1) {
                break;
            }
        } else {
            back_since = None;
        }
    }
    stop.store(true, Relaxed);
    for load in loads {
        load.await.unwrap();
    }
    watch.await.unwrap();
    // Every request sent gets its answer (or its failure) back: wait for the last ones.
    let drain = Instant::now() + secs(15);
    while (order_samples.0.lock().unwrap().len() as u64) < orders_sent.load(Relaxed)
        || (checkout_samples.0.lock().unwrap().len() as u64) < checkouts_sent.load(Relaxed)
    {
        assert!(
            Instant::now() < drain,
            "requests still unanswered 15 s after the run"
        );
        sleep(ms(20)).await;
    }
    let take = |s: Samples| std::mem::take(&mut *s.0.lock().unwrap());
    let states = std::mem::take(&mut *states.lock().unwrap());
    Run {
        slow_at,
        healed_at,
        states,
        orders_sent: orders_sent.load(Relaxed),
        orders: take(order_samples),
        checkouts_sent: checkouts_sent.load(Relaxed),
        checkouts: take(checkout_samples),
    }
}
