//! Issue 29 through the admin router, over real HTTP on loopback: refused changes, a promoted
//! shadow, and when a change given `for` ends.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_live_change_over_http_is_a_400_naming_the_key_the_value_and_the_reason() {
    Breaker::builder("ob-http-bad").build().unwrap();
    Bulkhead::builder("ob-http-bad-pool")
        .pool(4)
        .build()
        .unwrap();
    let base = serve().await;
    for (path, key, value, reason) in [
        (
            "breaker/ob-http-bad?timeout=soon",
            "timeout",
            "soon",
            "duration",
        ),
        (
            "breaker/ob-http-bad?failure_rate=0",
            "failure_rate",
            "0",
            "range",
        ),
        ("breaker/ob-http-bad?timout=2s", "timout", "", "unknown"),
        ("bulkhead/ob-http-bad-pool?pool=0", "pool", "0", "range"),
    ] {
        let (status, body) = http(Method::POST, &format!("{base}/settings/{path}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
        for word in [key, value, reason] {
            assert!(body.contains(word), "{path}: `{word}` in {body}");
        }
    }
    let b = registry().breaker("ob-http-bad").unwrap();
    assert!(
        b.settings_in_force()
            .iter()
            .all(|s| s.source == Source::Code),
        "a refused change changes nothing"
    );
    for (path, want) in [
        (
            "breaker/ob-http-bad?failure_rate=80&for=0s",
            StatusCode::BAD_REQUEST,
        ),
        (
            "breaker/ob-http-bad?failure_rate=80&for=later",
            StatusCode::BAD_REQUEST,
        ),
        (
            "breaker/ob-http-nobody?failure_rate=80",
            StatusCode::NOT_FOUND,
        ),
        ("breaker/ob-http-bad", StatusCode::BAD_REQUEST),
    ] {
        let (status, body) = http(Method::POST, &format!("{base}/settings/{path}")).await;
        assert_eq!(status, want, "{path}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shadow_promoted_over_http_is_in_force_and_the_answer_says_so() {
    let b = Breaker::builder("ob-http-shadow")
        .window_calls(10)
        .min_calls(5)
        .build()
        .unwrap();
    let base = serve().await;
    let (status, body) = http(
        Method::POST,
        &format!("{base}/shadow/set/ob-http-shadow?failure_rate=20&by=alice"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    for i in 0..10 {
        let _ = b
            .call(async move {
                if i % 5 == 4 {
                    Err("boom")
                } else {
                    Ok(())
                }
            })
            .await;
    }
    assert_eq!(b.state(), State::Closed, "the live breaker refused nothing");
    let (_, shown) = http(Method::GET, &format!("{base}/breakers/ob-http-shadow")).await;
    let shown: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(shown["shadow"]["state"], "open", "{shown}");
    let (_, prom) = http(Method::GET, &format!("{base}/metrics")).await;
    assert!(
        prom.lines()
            .any(|l| l.starts_with("fusebox_shadow_") && l.contains("ob-http-shadow")),
        "{prom}"
    );

    let (status, body) = http(
        Method::POST,
        &format!("{base}/shadow/promote/ob-http-shadow?by=alice"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(b.config_in_force().failure_rate(), 20);
    assert_eq!(
        in_force(&b.settings_in_force(), "failure_rate"),
        ("20".into(), Source::Admin)
    );
    // What the operator reads must match what happened.
    assert!(
        !body.contains("unchanged"),
        "the promote answer says the live settings are unchanged, yet they changed: {body}"
    );
    let answer: Value = serde_json::from_str(&body).unwrap();
    let rate = answer["settings"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["key"] == "failure_rate"))
        .unwrap_or_else(|| panic!("the settings now in force in {answer}"));
    assert_eq!(
        (&rate["value"], &rate["source"]),
        (&"20".into(), &"admin".into())
    );
    // The code's settings come back as after any live change.
    let (status, _) = http(
        Method::DELETE,
        &format!("{base}/settings/breaker/ob-http-shadow"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(b.config_in_force().failure_rate(), 50);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_change_given_for_shows_when_it_ends_for_a_breaker_and_a_bulkhead_alike() {
    Breaker::builder("ob-exp").build().unwrap();
    Bulkhead::builder("ob-exp-pool").pool(4).build().unwrap();
    let base = serve().await;
    for path in [
        "breaker/ob-exp?failure_rate=80&for=10m&by=alice",
        "bulkhead/ob-exp-pool?pool=6&for=10m&by=alice",
    ] {
        let (status, body) = http(Method::POST, &format!("{base}/settings/{path}")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let m: Value = serde_json::from_str(&body).unwrap();
        let left = m["settings_change_expires_in_s"]
            .as_f64()
            .unwrap_or_else(|| panic!("{path}: when it ends, in {m}"));
        assert!((590.0..=600.0).contains(&left), "{path}: {left}");
    }
    let (_, all) = http(Method::GET, &format!("{base}/breakers")).await;
    let all: Value = serde_json::from_str(&all).unwrap();
    let pool = all["bulkheads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "ob-exp-pool")
        .unwrap();
    assert!(
        pool["settings_change_expires_in_s"].as_f64().is_some(),
        "{pool}"
    );
    let (status, body) = http(
        Method::DELETE,
        &format!("{base}/settings/bulkhead/ob-exp-pool"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let m: Value = serde_json::from_str(&body).unwrap();
    assert!(m["settings_change_expires_in_s"].is_null(), "{m}");
    assert_eq!(m["pool"], 4);
}
