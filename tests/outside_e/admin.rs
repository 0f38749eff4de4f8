//! Issue 4 and 15: the admin router, as an operator uses it (real HTTP on loopback).

use super::*;

const TOKEN: &str = "outside-e-token-0123456789";

#[derive(Debug, PartialEq)]
enum Quote {
    Live(u32),
    Cached,
}

#[breaker(name = "oe-admin", window_calls = 10, fallback = cached_quote)]
async fn admin_quote(n: u32) -> Result<Quote, DepError> {
    Ok(Quote::Live(n))
}

fn cached_quote(_: Error<DepError>) -> Result<Quote, DepError> {
    Ok(Quote::Cached)
}

#[breaker(name = "oe-admin-keyed", key = shard, fallback = cached_quote)]
async fn admin_shard(shard: &str) -> Result<Quote, DepError> {
    Ok(Quote::Live(shard.len() as u32))
}

#[breaker(name = "oe-admin-never-called")]
async fn never_called() -> Result<(), DepError> {
    Ok(())
}

async fn http(method: reqwest::Method, url: &str, token: Option<&str>) -> (u16, String) {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut req = client.request(method, url);
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let resp = req.send().await.unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

#[tokio::test]
async fn an_operator_lists_forces_and_resets_through_the_router() {
    use reqwest::Method;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = fusebox::admin::router(TOKEN).unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    // No token, a wrong one, on a route that exists and one that does not: 401, nothing said.
    for path in ["/breakers", "/breakers/oe-admin", "/no-such-route"] {
        for token in [None, Some("outside-e-token-012345678"), Some("Bearer")] {
            let (status, body) = http(Method::GET, &format!("{base}{path}"), token).await;
            assert_eq!(
                (status, body.contains("oe-admin")),
                (401, false),
                "{path} {token:?}"
            );
        }
    }
    // Listed before its first call, with zero counts.
    let (status, body) = http(Method::GET, &format!("{base}/breakers"), Some(TOKEN)).await;
    assert_eq!(status, 200);
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    let listed = json["breakers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "oe-admin-never-called")
        .expect("listed before any call");
    assert_eq!(listed["calls"], 0);
    let _ = never_called;

    // The issue's routes: force open, a call gets the fallback; close; reset.
    assert_eq!(admin_quote(1).await, Ok(Quote::Live(1)));
    for (verb, state, answer) in [
        ("open", "forced_open", Quote::Cached),
        ("close", "forced_closed", Quote::Live(2)),
        ("reset", "closed", Quote::Live(2)),
    ] {
        let (status, body) = http(
            Method::POST,
            &format!("{base}/breakers/oe-admin/{verb}"),
            Some(TOKEN),
        )
        .await;
        assert_eq!(status, 200, "{verb}: {body}");
        let json: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(json["state"], state, "{verb}: {json}");
        assert_eq!(admin_quote(2).await, Ok(answer), "after {verb}");
    }
    // Keyed names, as is and percent-encoded; a key with a slash is one name segment.
    admin_shard("3").await.unwrap();
    admin_shard("a/b").await.unwrap();
    for path in [
        "/breakers/oe-admin-keyed/3",
        "/breakers/oe-admin-keyed%2F3",
        "/breakers/oe-admin-keyed/a%252Fb",
    ] {
        let (status, body) = http(Method::GET, &format!("{base}{path}"), Some(TOKEN)).await;
        assert_eq!(status, 200, "{path}: {body}");
    }
    let (status, _) = http(
        Method::POST,
        &format!("{base}/actions/open/oe-admin-keyed/3"),
        Some(TOKEN),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(admin_shard("3").await, Ok(Quote::Cached));
    assert_eq!(
        admin_shard("4").await,
        Ok(Quote::Live(1)),
        "other keys untouched"
    );
    // Unknown breaker 404, wrong method 405 naming what is allowed.
    let (status, _) = http(
        Method::POST,
        &format!("{base}/breakers/oe-nope/open"),
        Some(TOKEN),
    )
    .await;
    assert_eq!(status, 404);
    let client = reqwest::Client::new();
    let resp = client
        .delete(format!("{base}/breakers/oe-admin"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 405);
    assert!(resp.headers().get("allow").is_some());
    // Prometheus text from the same router.
    let (status, text) = http(Method::GET, &format!("{base}/metrics"), Some(TOKEN)).await;
    assert_eq!(status, 200);
    assert!(
        text.contains(
            r#"fusebox_breaker_state{breaker="oe-admin-keyed",key="3",state="forced_open"} 1"#
        ),
        "{text}"
    );
}
