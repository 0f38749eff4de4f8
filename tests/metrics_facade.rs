//! Feature `metrics`: the snapshot published through the `metrics` crate facade, as an
//! installed exporter would receive it (captured with metrics-util's debugging recorder).
#![cfg(feature = "metrics")]

use std::time::Duration;

use fusebox::{Breaker, Bulkhead, Error, Metrics};
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use metrics_util::MetricKind;

type Series = Vec<(
    metrics_util::CompositeKey,
    Option<metrics::Unit>,
    Option<metrics::SharedString>,
    DebugValue,
)>;

/// Values since the last snapshot: the debugging recorder resets what it reports.
fn take(snap: &Snapshotter) -> Series {
    snap.snapshot().into_vec()
}

/// The value of the series `name` whose labels include all of `want`.
fn find(series: &Series, name: &str, want: &[(&str, &str)]) -> Option<(MetricKind, DebugValue)> {
    series
        .iter()
        .find(|(k, _, _, _)| {
            let key = k.key();
            key.name() == name
                && want
                    .iter()
                    .all(|(n, v)| key.labels().any(|l| l.key() == *n && l.value() == *v))
        })
        .map(|(k, _, _, v)| {
            // DebugValue is not Clone.
            let v = match v {
                DebugValue::Counter(n) => DebugValue::Counter(*n),
                DebugValue::Gauge(g) => DebugValue::Gauge(*g),
                DebugValue::Histogram(h) => DebugValue::Histogram(h.clone()),
            };
            (k.kind(), v)
        })
}

/// The value of `fusebox_breaker_state{state=...}` for one breaker in a fresh snapshot.
fn state_gauge(snap: &Snapshotter, me: (&str, &str), state: &str) -> Option<DebugValue> {
    find(
        &take(snap),
        "fusebox_breaker_state",
        &[me, ("state", state)],
    )
    .map(|x| x.1)
}

fn gauge(v: f64) -> DebugValue {
    DebugValue::Gauge(v.into())
}

#[tokio::test(start_paused = true)]
async fn a_snapshot_becomes_counters_and_gauges_under_the_prometheus_names() {
    let b = Breaker::builder("facade-snap")
        .window_calls(4)
        .min_calls(4)
        .build_detached()
        .unwrap();
    let pool = Bulkhead::builder("facade-pool")
        .pool(3)
        .build_detached()
        .unwrap();
    for i in 0..4 {
        let _: Result<(), Error<()>> = b
            .call_in(&pool, async move {
                if i % 2 == 0 {
                    Ok(())
                } else {
                    Err(())
                }
            })
            .await;
    }
    // Open now: two refusals, counted under reason `open`.
    for _ in 0..2 {
        let _: Result<(), Error<()>> = b.call(async { Ok(()) }).await;
    }
    let mut m = Metrics::default();
    m.breakers.push(b.metrics());
    m.bulkheads.push(pool.metrics());

    let recorder = DebuggingRecorder::new();
    let snap = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || fusebox::export::metrics::record_snapshot(&m));
    let snap = take(&snap);

    let me = ("breaker", "facade-snap");
    assert_eq!(
        find(
            &snap,
            "fusebox_breaker_calls_total",
            &[me, ("outcome", "failed")]
        ),
        Some((MetricKind::Counter, DebugValue::Counter(2)))
    );
    assert_eq!(
        find(&snap, "fusebox_breaker_state", &[me, ("state", "open")]),
        Some((MetricKind::Gauge, gauge(1.0))),
        "2 failures of 4 trip at 50 %"
    );
    assert_eq!(
        find(&snap, "fusebox_breaker_state", &[me, ("state", "closed")]),
        Some((MetricKind::Gauge, gauge(0.0)))
    );
    for (reason, n) in [("open", 2), ("forced_open", 0), ("half_open", 0)] {
        assert_eq!(
            find(
                &snap,
                "fusebox_breaker_rejected_total",
                &[me, ("reason", reason)]
            ),
            Some((MetricKind::Counter, DebugValue::Counter(n))),
            "{reason}"
        );
    }
    assert_eq!(
        find(&snap, "fusebox_breaker_failure_ratio", &[me]),
        Some((MetricKind::Gauge, gauge(0.5)))
    );
    assert_eq!(
        find(&snap, "fusebox_breaker_stuck", &[me]),
        Some((MetricKind::Gauge, gauge(0.0)))
    );
    assert_eq!(
        find(
            &snap,
            "fusebox_bulkhead_admitted_total",
            &[("bulkhead", "facade-pool")]
        ),
        Some((MetricKind::Counter, DebugValue::Counter(4)))
    );
    assert_eq!(
        find(
            &snap,
            "fusebox_bulkhead_pool",
            &[("bulkhead", "facade-pool")]
        ),
        Some((MetricKind::Gauge, gauge(3.0)))
    );

    // Counters are lifetime totals published with `absolute`: a second report does not add.
    m.breakers[0] = b.metrics();
    metrics::with_local_recorder(&recorder, || fusebox::export::metrics::record_snapshot(&m));
    assert_eq!(
        find(
            &snap,
            "fusebox_breaker_calls_total",
            &[me, ("outcome", "failed")]
        ),
        Some((MetricKind::Counter, DebugValue::Counter(2)))
    );
}

#[tokio::test(start_paused = true)]
async fn the_periodic_reporter_publishes_the_global_registry_every_period() {
    let recorder = DebuggingRecorder::new();
    let snap = recorder.snapshotter();
    recorder
        .install()
        .expect("the only recorder of this test binary");
    let b = Breaker::builder("facade-periodic").build().unwrap();
    let reporter = tokio::spawn(fusebox::export::metrics::report_every(Duration::from_secs(
        10,
    )));
    let me = ("breaker", "facade-periodic");
    tokio::task::yield_now().await;
    assert_eq!(
        state_gauge(&snap, me, "closed"),
        Some(gauge(1.0)),
        "the first report goes out at once"
    );
    b.force_open();
    tokio::time::advance(Duration::from_secs(9)).await;
    tokio::task::yield_now().await;
    assert_eq!(
        state_gauge(&snap, me, "forced_open"),
        Some(gauge(0.0)),
        "no report before the period is over (the recorder reset the gauge when read)"
    );
    tokio::time::advance(Duration::from_secs(1)).await;
    tokio::task::yield_now().await;
    assert_eq!(state_gauge(&snap, me, "forced_open"), Some(gauge(1.0)));
    reporter.abort();
}
