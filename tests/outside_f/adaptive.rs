//! Issue 17: adaptive bulkheads.

use super::*;

/// Bounds that cannot hold are typed errors naming what is wrong; a start given outside the
/// bounds is one too, and the default start is brought within them.
#[test]
fn adaptive_bounds_that_cannot_hold_are_refused_or_kept() {
    assert!(Bulkhead::builder("of-ad-bad")
        .adaptive()
        .min_pool(10)
        .max_pool(4)
        .build_detached()
        .is_err());
    assert!(Bulkhead::builder("of-ad-zero")
        .adaptive()
        .min_pool(0)
        .build_detached()
        .is_err());
    // The default start (20) is brought within a smaller max_pool.
    let b = Bulkhead::builder("of-ad-start")
        .adaptive()
        .max_pool(8)
        .build_detached()
        .unwrap();
    assert_eq!(b.pool(), 8);
    // A start given outside the bounds is refused, naming it.
    let Err(e) = Bulkhead::builder("of-ad-low")
        .adaptive()
        .pool(2)
        .min_pool(4)
        .build_detached()
    else {
        panic!("a start below min_pool is refused");
    };
    assert!(
        matches!(
            e,
            fusebox::settings::ConfigError::OutOfRange { field: "pool", .. }
        ),
        "{e}"
    );
    // A fixed pool takes no adaptive bounds.
    assert!(Bulkhead::builder("of-fixed-bounds")
        .pool(4)
        .max_pool(8)
        .build_detached()
        .is_err());
}

#[derive(Debug, Clone, PartialEq)]
struct ReportError;

impl From<Rejection> for ReportError {
    fn from(_: Rejection) -> Self {
        ReportError
    }
}

static REPORT_LATENCY_MS: AtomicU64 = AtomicU64::new(50);

/// A report dependency behind a timeout and an adaptive pool, as the lesson's step 5 has it.
#[breaker(
    name = "of-report",
    timeout = "1s",
    min_calls = 1000,
    window_calls = 1000
)]
#[bulkhead(
    name = "of-report-pool",
    limit = "adaptive",
    min_pool = 2,
    max_pool = 40,
    pool = 20
)]
async fn report() -> Result<(), ReportError> {
    tokio::time::sleep(ms(REPORT_LATENCY_MS.load(SeqCst))).await;
    Ok(())
}

/// `callers` workers calling in a loop until `stop` is set.
fn workers(callers: usize, stop: &Arc<std::sync::atomic::AtomicBool>) {
    for _ in 0..callers {
        let stop = stop.clone();
        tokio::spawn(async move {
            while !stop.load(SeqCst) {
                if report().await.is_err() {
                    tokio::time::sleep(ms(10)).await;
                }
            }
        });
    }
}

/// The issue's promise through the attributes: a stuck dependency (every call ends at the
/// breaker's timeout) shrinks the limit to `min_pool`; when it answers again, the full limit is
/// back within 30 s. The limit and its history show in `metrics()` and Prometheus.
#[tokio::test(start_paused = true)]
async fn an_adaptive_pool_behind_a_timeout_collapses_when_stuck_and_is_back_within_30s() {
    let pool = registry()
        .bulkhead("of-report-pool")
        .expect("listed before any call");
    assert_eq!(pool.pool(), 20);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    workers(30, &stop);
    for _ in 0..50 {
        advance(ms(100)).await;
    }
    let healthy = pool.pool();
    assert!(
        healthy >= 20,
        "steady fast calls do not lower the limit: {healthy}"
    );

    REPORT_LATENCY_MS.store(60_000, SeqCst);
    let mut collapsed = None;
    for step in 0..600 {
        advance(ms(100)).await;
        if pool.pool() == 2 {
            collapsed = Some(step);
            break;
        }
    }
    assert!(
        collapsed.is_some(),
        "stuck for a minute, limit {}",
        pool.pool()
    );

    REPORT_LATENCY_MS.store(50, SeqCst);
    let mut back = None;
    for step in 1..=300 {
        advance(ms(100)).await;
        if pool.pool() >= healthy {
            back = Some(ms(100 * step));
            break;
        }
    }
    stop.store(true, SeqCst);
    let back = back.unwrap_or_else(|| panic!("limit {} after 30 s", pool.pool()));
    assert!(back <= secs(30), "{back:?}");

    let m = pool.metrics();
    let adaptive = m.adaptive.expect("an adaptive pool says so");
    assert_eq!((adaptive.min_pool, adaptive.max_pool), (2, 40));
    assert!(
        adaptive.history.iter().any(|c| c.limit == 2),
        "{:?}",
        adaptive.history
    );
    let text = fusebox::metrics().to_prometheus();
    let gauge = |family: &str| -> f64 {
        let line = text
            .lines()
            .find(|l| l.starts_with(family) && l.contains(r#""of-report-pool""#))
            .unwrap_or_else(|| panic!("{family} of of-report-pool in Prometheus"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    assert_eq!(
        gauge("fusebox_bulkhead_pool{"),
        pool.pool() as f64,
        "the limit now"
    );
    assert_eq!(gauge("fusebox_bulkhead_limit_min{"), 2.0);
    assert_eq!(gauge("fusebox_bulkhead_limit_max{"), 40.0);
    advance(secs(2)).await;
}

/// The limit's history starts with the start value, taken when the bulkhead was made: its
/// `ago` is the bulkhead's age, in `metrics()` and the JSON alike (it said about a week).
#[tokio::test(start_paused = true)]
async fn an_adaptive_pools_history_starts_when_the_pool_was_made() {
    let pool = Bulkhead::builder("of-ad-history")
        .adaptive()
        .pool(12)
        .build()
        .unwrap();
    advance(secs(5)).await;
    let m = pool.metrics();
    let history = m.adaptive.expect("adaptive").history;
    assert_eq!(history.len(), 1, "{history:?}");
    assert_eq!(history[0].limit, 12);
    assert!(
        (secs(5)..secs(6)).contains(&history[0].ago),
        "made 5 s ago: {:?}",
        history[0].ago
    );
    let json = serde_json::to_value(fusebox::metrics()).unwrap();
    let row = json["bulkheads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "of-ad-history")
        .unwrap()
        .clone();
    let ago = row["adaptive"]["history"][0]["ago_s"].as_f64().unwrap();
    assert!((5.0..6.0).contains(&ago), "{row}");
}
