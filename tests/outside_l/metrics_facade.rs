//! Issues 29, 30, 31 x the `metrics` facade: "every metrics output".

use super::*;

#[retry(attempts = 2, backoff = "1ms", budget = 100, budget_floor = 100)]
#[breaker(name = "ol-facade-retry")]
async fn facade_retried() -> Result<u32, ApiError> {
    Err(ApiError::Down)
}

/// Issue 31: the ignored outcome is "counted in its own lifetime counter, in every metrics
/// output"; issue 30: retry counts "in every metrics output"; issue 29: a shadow "shows in the
/// metrics". One snapshot with all of them (an ignored call, a retried name, a shadow, a
/// ramping breaker, a bulkhead) is rendered as Prometheus text and published through the
/// `metrics` crate facade: every series of the text, with its labels, reaches the facade.
#[tokio::test(start_paused = true)]
async fn every_series_of_the_prometheus_text_reaches_the_metrics_facade() {
    use metrics_util::debugging::DebuggingRecorder;
    use std::collections::BTreeSet;

    // An ignored call, a shadow, and retries under their own name.
    let b = Breaker::builder("ol-facade")
        .window_calls(4)
        .min_calls(4)
        .build()
        .unwrap();
    b.set_shadow([("failure_rate", "10")]).unwrap();
    let _ = b
        .call_classified(async { Err::<u16, _>(ApiError::Invalid) }, classify)
        .await;
    let _ = b.call(async { Err::<u16, _>(ApiError::Down) }).await;
    assert_eq!(facade_retried().await, Err(ApiError::Down));
    let _ = Bulkhead::builder("ol-facade-pool").pool(2).build().unwrap();

    let m = fusebox::metrics();
    let text = m.to_prometheus();
    let series = |name: &str, labels: Vec<(String, String)>| {
        let mut labels = labels;
        labels.sort();
        format!("{name}{labels:?}")
    };
    let mut in_text = BTreeSet::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let sample = line.rsplit_once(' ').unwrap().0;
        let (name, labels) = match sample.split_once('{') {
            Some((n, rest)) => (n, rest.trim_end_matches('}')),
            None => (sample, ""),
        };
        let labels = labels
            .split("\",")
            .filter(|l| !l.is_empty())
            .map(|l| {
                let (k, v) = l.split_once('=').unwrap();
                (k.to_owned(), v.trim_matches('"').to_owned())
            })
            .collect();
        in_text.insert(series(name, labels));
    }
    let recorder = DebuggingRecorder::new();
    let snap = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || fusebox::metrics::facade::record_snapshot(&m));
    let in_facade: BTreeSet<String> = snap
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(k, _, _, _)| {
            let key = k.key();
            let labels = key
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect();
            series(key.name(), labels)
        })
        .collect();
    let missing: Vec<&String> = in_text.difference(&in_facade).collect();
    assert!(
        missing.is_empty(),
        "in the Prometheus text, not in the facade: {missing:#?}"
    );
    for needle in ["outcome\", \"ignored", "ol-facade-retry", "shadow"] {
        assert!(
            in_facade.iter().any(|s| s.contains(needle)),
            "{needle} not in the facade"
        );
    }
}
