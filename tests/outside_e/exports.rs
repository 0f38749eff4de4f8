//! Issue 4: exports.

use super::*;

#[breaker(name = "oe-prom", key = region, window_calls = 2, min_calls = 2)]
async fn by_region(region: &str, ok: bool) -> Result<(), DepError> {
    ok.then_some(()).ok_or(DepError::Down)
}

#[tokio::test(start_paused = true)]
async fn a_scrape_of_a_keyed_outage_parses_and_carries_the_values() {
    by_region("eu", true).await.unwrap();
    let _ = by_region("us", false).await;
    let _ = by_region("us", false).await;
    let _ = by_region("us", true).await; // refused: open
    let text = fusebox::metrics::prometheus();
    let lines: Vec<Result<String, std::io::Error>> =
        text.lines().map(|l| Ok(l.to_owned())).collect();
    let scrape = prometheus_parse::Scrape::parse(lines.into_iter()).expect("valid exposition");
    let value = |name: &str, want: &[(&str, &str)]| -> f64 {
        let hits: Vec<f64> = scrape
            .samples
            .iter()
            .filter(|s| s.metric == name && want.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
            .map(|s| match s.value {
                prometheus_parse::Value::Counter(v)
                | prometheus_parse::Value::Gauge(v)
                | prometheus_parse::Value::Untyped(v) => v,
                _ => f64::NAN,
            })
            .collect();
        assert_eq!(hits.len(), 1, "{name} {want:?} in\n{text}");
        hits[0]
    };
    let at = |key: &'static str, extra: &[(&'static str, &'static str)]| {
        let mut l = vec![("breaker", "oe-prom"), ("key", key)];
        l.extend_from_slice(extra);
        l
    };
    let expected = [
        ("fusebox_breaker_state", at("us", &[("state", "open")]), 1.0),
        (
            "fusebox_breaker_state",
            at("us", &[("state", "closed")]),
            0.0,
        ),
        (
            "fusebox_breaker_state",
            at("eu", &[("state", "closed")]),
            1.0,
        ),
        (
            "fusebox_breaker_calls_total",
            at("us", &[("outcome", "failed")]),
            2.0,
        ),
        (
            "fusebox_breaker_calls_total",
            at("eu", &[("outcome", "succeeded")]),
            1.0,
        ),
        (
            "fusebox_breaker_rejected_total",
            at("us", &[("reason", "open")]),
            1.0,
        ),
        ("fusebox_breaker_opened_total", at("us", &[]), 1.0),
        ("fusebox_breaker_failure_ratio", at("us", &[]), 1.0),
    ];
    for (metric, labels, want) in expected {
        assert_eq!(value(metric, &labels), want, "{metric} {labels:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn the_json_snapshot_keeps_its_field_names() {
    let b = Breaker::builder("oe-json")
        .window_calls(4)
        .min_calls(4)
        .build()
        .unwrap();
    call_for(&b, ms(20), true).await.unwrap();
    let _ = call_for(&b, ms(20), false).await;
    let json: serde_json::Value = serde_json::from_str(&fusebox::metrics().to_json()).unwrap();
    let me = json["breakers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "oe-json")
        .unwrap();
    assert_eq!(me["state"], "closed", "{me}");
    assert_eq!(me["failure_rate_pct"], 50.0);
    assert_eq!(me["failed"], 1);
    assert!(me["p95_s"].as_f64().unwrap() > 0.0);
    assert!(me["time_in_state_s"].is_number());
    assert_eq!(me["stuck"], false);
    assert_eq!(me["rejected_by_reason"]["open"], 0);
    assert!(json["bulkheads"].is_array());
}
