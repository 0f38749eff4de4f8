//! `#[bulkhead(limit = "adaptive")]`: the attribute builds the same adaptive pool as the
//! builder, listed from the start, its limit in every output, its changes logged.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::DepError;
use fusebox::{bulkhead, registry, PoolLimit};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

#[bulkhead(
    name = "attr-adaptive",
    limit = "adaptive",
    min_pool = 2,
    pool = 8,
    max_pool = 8
)]
async fn report(latency: Duration) -> Result<(), DepError> {
    tokio::time::sleep(latency).await;
    Ok(())
}

/// `(level, message)` of every event naming a bulkhead.
#[derive(Clone, Default)]
struct Events(Arc<Mutex<Vec<(Level, String)>>>);

#[derive(Default)]
struct Fields {
    bulkhead: bool,
    message: String,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "bulkhead" => self.bulkhead = true,
            "message" => self.message = format!("{value:?}"),
            _ => {}
        }
    }
}

impl<S: Subscriber> Layer<S> for Events {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut f = Fields::default();
        event.record(&mut f);
        if f.bulkhead {
            let level = *event.metadata().level();
            self.0.lock().unwrap().push((level, f.message));
        }
    }
}

/// Calls `report` from `n` callers for `span`; refused callers retry a millisecond later.
async fn load(n: usize, latency: Duration, span: Duration) {
    let end = tokio::time::Instant::now() + span;
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            tokio::spawn(async move {
                while tokio::time::Instant::now() < end {
                    if report(latency).await.is_err() {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn the_attribute_limit_moves_shows_and_logs() {
    let events = Events::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(events.clone()));
    let pool = registry()
        .bulkhead("attr-adaptive")
        .expect("listed before its first call");
    assert_eq!(
        pool.config().limit(),
        PoolLimit::Adaptive {
            min_pool: 2,
            max_pool: 8
        }
    );
    assert_eq!(pool.pool(), 8);

    load(16, Duration::from_millis(10), Duration::from_secs(3)).await;
    assert_eq!(pool.pool(), 8, "a steady dependency keeps a full pool");
    // The dependency stalls: 100 x slower; the limit falls to min_pool.
    load(16, Duration::from_secs(1), Duration::from_secs(60)).await;
    assert_eq!(pool.pool(), 2);

    let logged = events.0.lock().unwrap().clone();
    assert!(
        logged
            .iter()
            .any(|(l, m)| *l == Level::DEBUG && m.contains("limit changed")),
        "{logged:?}"
    );
    let warns: Vec<_> = logged.iter().filter(|(l, _)| *l == Level::WARN).collect();
    assert_eq!(warns.len(), 1, "one WARN for the collapse: {logged:?}");
    assert!(warns[0].1.contains("min_pool"), "{warns:?}");

    let m = fusebox::metrics();
    let b = m.bulkhead("attr-adaptive").unwrap();
    let a = b.adaptive.as_ref().unwrap();
    assert_eq!((b.pool, a.min_pool, a.max_pool), (2, 2, 8));
    assert_eq!(a.history.last().unwrap().limit, 2);
    assert!(a.changes as usize >= a.history.len() - 1);

    let text = fusebox::export::prometheus();
    assert!(
        text.contains("fusebox_bulkhead_pool{bulkhead=\"attr-adaptive\"} 2\n"),
        "{text}"
    );
    assert!(text.contains("fusebox_bulkhead_limit_min{bulkhead=\"attr-adaptive\"} 2\n"));
    assert!(text.contains("fusebox_bulkhead_limit_max{bulkhead=\"attr-adaptive\"} 8\n"));
    assert!(text
        .contains("fusebox_bulkhead_latency_seconds{bulkhead=\"attr-adaptive\",window=\"short\"}"));

    #[cfg(feature = "serde")]
    {
        let json = serde_json::to_value(b).unwrap();
        assert_eq!(json["pool"], 2);
        assert_eq!(json["adaptive"]["min_pool"], 2);
        let history = json["adaptive"]["history"].as_array().unwrap();
        assert_eq!(history.last().unwrap()["limit"], 2);
        let ago = |i: usize| history[i]["ago_s"].as_f64().unwrap();
        assert!(ago(0) >= ago(history.len() - 1), "{history:?}");
        assert!(ago(0) > 50.0, "{history:?}");
        let (short, long) = (
            json["adaptive"]["short_latency_s"].as_f64(),
            json["adaptive"]["long_latency_s"].as_f64(),
        );
        assert!(long.unwrap() < short.unwrap() / 2.0, "{json}");
    }
}
