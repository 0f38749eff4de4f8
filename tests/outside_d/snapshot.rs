//! The snapshot's forms: the JSON and Prometheus figures of the contract, and a testing
//! scope's listing and forced states.

use super::*;

#[cfg(feature = "serde")]
#[tokio::test(start_paused = true)]
async fn the_json_snapshot_names_every_figure_of_the_contract() {
    #[breaker(name = "d-json", window_calls = 2, min_calls = 2)]
    #[bulkhead(name = "d-json-pool", pool = 3)]
    async fn json_call() -> Result<u8, DepError> {
        Ok(1)
    }
    json_call().await.unwrap();
    let v = serde_json::to_value(fusebox::metrics()).unwrap();
    let b = v["breakers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "d-json")
        .expect("breaker in JSON");
    // JSON carries the unit in the name, as the snapshot's rustdoc says.
    for field in [
        "state",
        "time_in_state_s",
        "calls",
        "failed",
        "slow",
        "rejected",
        "failure_rate_pct",
        "slow_rate_pct",
        "p50_s",
        "p95_s",
        "p99_s",
        "times_opened",
        "stuck",
    ] {
        assert!(b.get(field).is_some(), "{field} missing from {b}");
    }
    for reason in [
        "open",
        "forced_open",
        "half_open",
        "bulkhead_full",
        "timed_out",
    ] {
        assert!(
            b["rejected_by_reason"].get(reason).is_some(),
            "{reason} missing from {b}"
        );
    }
    assert_eq!(b["calls"], 1);
    let p = v["bulkheads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "d-json-pool")
        .expect("bulkhead in JSON");
    for field in ["pool", "in_flight", "peak", "rejected"] {
        assert!(p.get(field).is_some(), "{field} missing from {p}");
    }
    assert_eq!(p["pool"], 3);
}

#[tokio::test(start_paused = true)]
async fn prometheus_text_holds_the_rejection_reasons_and_the_pool() {
    #[breaker(name = "d-prom", window_calls = 2, min_calls = 2)]
    #[bulkhead(name = "d-prom-pool", pool = 4)]
    async fn prom_call() -> Result<u8, DepError> {
        Ok(1)
    }
    prom_call().await.unwrap();
    registry().breaker("d-prom").unwrap().force_open();
    let _ = prom_call().await;
    let text = fusebox::metrics().to_prometheus();
    // The two renderings agree on this test's names (other tests of the binary change theirs
    // in between, so the whole texts of two snapshots may differ).
    let ours = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.contains("\"d-prom"))
            .map(str::to_owned)
            .collect()
    };
    assert!(!ours(&text).is_empty(), "no d-prom lines in\n{text}");
    assert_eq!(ours(&text), ours(&fusebox::metrics::prometheus()));
    let line = text
        .lines()
        .find(|l| l.contains("d-prom\"") && l.contains("forced_open") && l.contains("reject"))
        .unwrap_or_else(|| panic!("no forced_open rejection line for d-prom in\n{text}"));
    assert!(line.ends_with(" 1"), "{line}");
    assert!(
        text.lines()
            .any(|l| l.contains("d-prom-pool") && l.contains("pool") && l.ends_with(" 4")),
        "no pool size line for d-prom-pool in\n{text}"
    );
}

#[cfg(feature = "testing")]
#[tokio::test(start_paused = true)]
async fn a_testing_scope_lists_annotated_bulkheads_and_keeps_forced_states_inside() {
    #[breaker(name = "d-scoped", window_calls = 2, min_calls = 2)]
    #[bulkhead(name = "d-scoped-pool", pool = 2)]
    async fn scoped_call() -> Result<u8, DepError> {
        Ok(1)
    }
    {
        let _scope = fusebox::testing::scope();
        assert!(registry().bulkhead("d-scoped-pool").is_some());
        registry().breaker("d-scoped").unwrap().force_open();
        assert!(scoped_call().await.is_err());
        fusebox::testing::assert_state("d-scoped", State::ForcedOpen);
    }
    // Outside the scope the global breaker was never forced.
    assert_eq!(scoped_call().await, Ok(1));
    assert_eq!(
        registry().breaker("d-scoped").unwrap().state(),
        State::Closed
    );
}
