//! The admin router over real HTTP on loopback: auth, look, toggle, keyed names, errors.
//!
//! Real sockets run on real time (a paused clock would auto-advance while waiting on IO);
//! every request is bounded by the client's timeout and nothing sleeps to wait.
#![cfg(feature = "admin")]

use std::time::Duration;

use fusebox::{registry, Breaker, Error, Rejection, State};
use reqwest::{Client, Method, StatusCode};
use serde_json::Value;

const TOKEN: &str = "t0ken-for-tests-x";

/// Serves a fresh admin router on 127.0.0.1 and returns its base URL. The listener is bound
/// before this returns, so requests queue in its backlog until the server accepts them.
async fn serve() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = fusebox::admin::router(TOKEN).unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn client() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

async fn send(method: Method, url: &str, token: Option<&str>) -> (StatusCode, String) {
    let mut req = client().request(method, url);
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let resp = req.send().await.unwrap();
    let status = resp.status();
    (status, resp.text().await.unwrap())
}

async fn get_json(url: &str) -> Value {
    let (status, body) = send(Method::GET, url, Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK, "{url}: {body}");
    serde_json::from_str(&body).unwrap()
}

async fn post_json(url: &str) -> Value {
    let (status, body) = send(Method::POST, url, Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK, "{url}: {body}");
    serde_json::from_str(&body).unwrap()
}

async fn call_ok(b: &Breaker) -> Result<(), Error<&'static str>> {
    b.call(async { Ok(()) }).await
}

async fn call_fail(b: &Breaker) -> Result<(), Error<&'static str>> {
    b.call(async { Err("boom") }).await
}

#[tokio::test]
async fn every_route_needs_the_token_and_a_refusal_says_nothing() {
    Breaker::builder("adm-auth").build().unwrap();
    let base = serve().await;
    let routes = [
        (Method::GET, "/breakers"),
        (Method::GET, "/metrics"),
        (Method::GET, "/breakers/adm-auth"),
        (Method::POST, "/breakers/adm-auth/open"),
        (Method::GET, "/no-such-route"),
        (Method::DELETE, "/breakers"),
    ];
    for (method, path) in routes {
        let url = format!("{base}{path}");
        for token in [
            None,
            Some("wrong"),
            Some("t0ken-for-tests-"),
            Some("t0ken-for-tests-x!"),
        ] {
            let (status, body) = send(method.clone(), &url, token).await;
            assert_eq!(
                status,
                StatusCode::UNAUTHORIZED,
                "{method} {path} {token:?}"
            );
            assert!(body.is_empty(), "a 401 carries no details: {body:?}");
        }
        // The right token in another scheme is still refused.
        let resp = client()
            .request(method.clone(), &url)
            .header("authorization", format!("Basic {TOKEN}"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(resp.headers()["www-authenticate"], "Bearer");
    }
    assert_eq!(
        registry().breaker("adm-auth").unwrap().state(),
        State::Closed,
        "an unauthorized POST changed nothing"
    );
    // The scheme is case-insensitive.
    let resp = client()
        .get(format!("{base}/breakers"))
        .header("authorization", format!("bearer {TOKEN}"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
}

#[test]
fn an_empty_or_unsendable_token_is_refused_at_construction() {
    use fusebox::admin::{router, AdminError};
    assert_eq!(router("").err(), Some(AdminError::EmptyToken));
    assert_eq!(router("two words").err(), Some(AdminError::InvalidToken));
    assert_eq!(router("line\nbreak").err(), Some(AdminError::InvalidToken));
    assert!(router("ok-token-of-16-bytes").is_ok());
}

#[tokio::test]
async fn lists_and_shows_breakers_as_json_and_serves_prometheus_text() {
    let b = Breaker::builder("adm-list")
        .window_calls(10)
        .build()
        .unwrap();
    fusebox::Bulkhead::builder("adm-list-pool")
        .pool(7)
        .build()
        .unwrap();
    call_ok(&b).await.unwrap();
    let _ = call_fail(&b).await;
    let base = serve().await;

    let all = get_json(&format!("{base}/breakers")).await;
    let mine = all["breakers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "adm-list")
        .expect("the list holds every breaker");
    assert_eq!(mine["state"], "closed");
    assert_eq!(mine["succeeded"], 1);
    assert_eq!(mine["failed"], 1);
    assert_eq!(mine["failure_rate_pct"], 50.0);
    assert_eq!(mine["stuck"], false);
    assert!(mine["time_in_state_s"].is_f64());
    assert!(mine["p95_s"].is_f64());
    let pool = all["bulkheads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "adm-list-pool")
        .unwrap();
    assert_eq!(pool["pool"], 7);

    let one = get_json(&format!("{base}/breakers/adm-list")).await;
    assert_eq!(one["name"], "adm-list");
    assert_eq!(one["key"], Value::Null);
    assert_eq!(one["calls"], 2);

    let resp = client()
        .get(format!("{base}/metrics"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain; version=0.0.4"));
    let text = resp.text().await.unwrap();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).unwrap();
    let failed = scrape
        .samples
        .iter()
        .find(|s| {
            s.metric == "fusebox_breaker_calls_total"
                && s.labels.get("breaker") == Some("adm-list")
                && s.labels.get("outcome") == Some("failed")
        })
        .unwrap();
    assert_eq!(failed.value, prometheus_parse::Value::Counter(1.0));
}

#[tokio::test]
async fn force_open_rejects_calls_force_close_lets_them_through_reset_closes() {
    let b = Breaker::builder("adm-toggle")
        .window_calls(2)
        .min_calls(2)
        .build()
        .unwrap();
    let base = serve().await;

    let opened = post_json(&format!("{base}/breakers/adm-toggle/open")).await;
    assert_eq!(opened["state"], "forced_open");
    match call_ok(&b).await {
        Err(Error::Rejected(Rejection::Open { state, .. })) => assert_eq!(state, State::ForcedOpen),
        other => panic!("a forced-open breaker must reject, got {other:?}"),
    }

    let closed = post_json(&format!("{base}/breakers/adm-toggle/close")).await;
    assert_eq!(closed["state"], "forced_closed");
    for _ in 0..4 {
        assert!(matches!(call_fail(&b).await, Err(Error::Failed("boom"))));
    }
    assert_eq!(b.state(), State::ForcedClosed, "forced closed never trips");

    let reset = post_json(&format!("{base}/breakers/adm-toggle/reset")).await;
    assert_eq!(reset["state"], "closed");
    assert_eq!(reset["window_calls"], 0, "reset empties the window");
    call_ok(&b).await.unwrap();
    assert_eq!(b.state(), State::Closed);
}

#[tokio::test]
async fn unknown_breakers_are_404_and_wrong_methods_405() {
    Breaker::builder("adm-errors").build().unwrap();
    let base = serve().await;
    for (method, path, want) in [
        (Method::GET, "/breakers/adm-nope", StatusCode::NOT_FOUND),
        (
            Method::POST,
            "/breakers/adm-nope/open",
            StatusCode::NOT_FOUND,
        ),
        (Method::POST, "/breakers/adm-nope", StatusCode::NOT_FOUND),
        (Method::GET, "/elsewhere", StatusCode::NOT_FOUND),
        (
            Method::POST,
            "/breakers/adm-errors/explode",
            StatusCode::NOT_FOUND,
        ),
        (Method::DELETE, "/breakers", StatusCode::METHOD_NOT_ALLOWED),
        (Method::POST, "/metrics", StatusCode::METHOD_NOT_ALLOWED),
        (
            Method::PUT,
            "/breakers/adm-errors/open",
            StatusCode::METHOD_NOT_ALLOWED,
        ),
        (
            Method::GET,
            "/breakers/adm-errors/open",
            StatusCode::METHOD_NOT_ALLOWED,
        ),
        (
            Method::POST,
            "/breakers/adm-errors",
            StatusCode::METHOD_NOT_ALLOWED,
        ),
        // Not UTF-8 once decoded: a client error, never a panic.
        (Method::GET, "/breakers/%FF%FE", StatusCode::BAD_REQUEST),
    ] {
        let (status, _) = send(method.clone(), &format!("{base}{path}"), Some(TOKEN)).await;
        assert_eq!(status, want, "{method} {path}");
    }
    assert_eq!(
        registry().breaker("adm-errors").unwrap().state(),
        State::Closed
    );
}

#[tokio::test]
async fn a_large_body_is_never_read_and_the_server_keeps_answering() {
    let b = Breaker::builder("adm-body").build().unwrap();
    let base = serve().await;
    let resp = client()
        .post(format!("{base}/breakers/adm-body/open"))
        .bearer_auth(TOKEN)
        .body(vec![b'x'; 256 * 1024])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(b.state(), State::ForcedOpen);
    let (status, _) = send(Method::GET, &format!("{base}/breakers"), Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn keyed_breakers_answer_to_their_name_encoded_or_not() {
    let template = Breaker::builder("adm-redis").config().unwrap();
    let shard3 = registry().keyed(&template, &3);
    let shard4 = registry().keyed(&template, &4);
    let base = serve().await;

    for path in ["adm-redis%2F3", "adm-redis/3"] {
        let one = get_json(&format!("{base}/breakers/{path}")).await;
        assert_eq!(one["name"], "adm-redis/3", "{path}");
        assert_eq!(one["key"], "3");
    }

    post_json(&format!("{base}/breakers/adm-redis%2F3/open")).await;
    assert_eq!(shard3.state(), State::ForcedOpen);
    assert_eq!(
        shard4.state(),
        State::Closed,
        "one key's switch, not the others'"
    );
    post_json(&format!("{base}/breakers/adm-redis/3/reset")).await;
    assert_eq!(shard3.state(), State::Closed);
    post_json(&format!("{base}/breakers/adm-redis/4/close")).await;
    assert_eq!(shard4.state(), State::ForcedClosed);

    // The bare base name of keyed breakers is not a breaker.
    let (status, _) = send(
        Method::GET,
        &format!("{base}/breakers/adm-redis"),
        Some(TOKEN),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn nested_under_a_prefix_it_keeps_its_auth_and_its_routes() {
    let b = Breaker::builder("adm-nested").build().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().nest("/debug/fusebox", fusebox::admin::router(TOKEN).unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let base = format!("http://{addr}/debug/fusebox");

    let (status, _) = send(
        Method::POST,
        &format!("{base}/breakers/adm-nested/open"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(b.state(), State::Closed);
    post_json(&format!("{base}/breakers/adm-nested/open")).await;
    assert_eq!(b.state(), State::ForcedOpen);
    let one = get_json(&format!("{base}/breakers/adm-nested")).await;
    assert_eq!(one["state"], "forced_open");
}
