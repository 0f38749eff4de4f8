//! The operator page over plain HTTP on loopback: served without a token, HTML with no data in
//! it, while every data and action route still refuses a missing token. The browser test
//! (`admin_page_browser.rs`) drives the page itself.
//!
//! Real sockets on real time; every request is bounded by the client's timeout.
#![cfg(feature = "admin")]

use std::time::Duration;

use fusebox::{registry, Breaker, State};
use reqwest::{Client, Method, StatusCode};

const TOKEN: &str = "t0ken-for-the-page-tests";

async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn client() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

#[tokio::test]
async fn the_page_needs_no_token_is_html_and_holds_no_data() {
    let b = Breaker::builder("page-secret-dependency").build().unwrap();
    b.force_open();
    let base = serve(fusebox::admin::router(TOKEN).unwrap()).await;

    let resp = client().get(format!("{base}/")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let h = resp.headers();
    assert_eq!(h["content-type"], "text/html; charset=utf-8");
    let csp = h["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("connect-src 'self'"), "{csp}");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert_eq!(h["x-frame-options"], "DENY");
    let html = resp.text().await.unwrap();
    assert!(html.starts_with("<!doctype html>"));
    assert!(html.contains("<script>") && html.contains("<style>"));
    assert!(html.len() < 64 * 1024, "tens of KB: {}", html.len());
    // The shell carries no figure: no breaker name, no state, not the token.
    assert!(!html.contains("page-secret-dependency"));
    assert!(!html.contains(TOKEN));

    // With a token (right or wrong) it is the same page: the token changes nothing here.
    let with = client()
        .get(format!("{base}/"))
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(with.status(), StatusCode::OK);
    assert_eq!(with.text().await.unwrap(), html);

    let head = client().head(format!("{base}/")).send().await.unwrap();
    assert_eq!(head.status(), StatusCode::OK);
}

#[tokio::test]
async fn only_get_of_the_page_is_open_every_data_and_action_route_still_needs_the_token() {
    let b = Breaker::builder("page-auth").build().unwrap();
    let base = serve(fusebox::admin::router(TOKEN).unwrap()).await;
    for (method, path) in [
        (Method::GET, "/breakers"),
        (Method::GET, "/metrics"),
        (Method::GET, "/breakers/page-auth"),
        (Method::POST, "/breakers/page-auth/open"),
        (Method::POST, "/breakers/page-auth/open?for=10m"),
        (Method::POST, "/"),
        (Method::DELETE, "/"),
        (Method::GET, "/index.html"),
        (Method::GET, "//"),
    ] {
        let resp = client()
            .request(method.clone(), format!("{base}{path}"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "{method} {path}");
        assert!(resp.text().await.unwrap().is_empty());
    }
    assert_eq!(b.state(), State::Closed, "no token, no action");
}

#[tokio::test]
async fn an_expiry_in_the_query_is_harmless_and_keyed_names_decode() {
    let template = Breaker::builder("page-redis").config().unwrap();
    let shard = registry().keyed(&template, &3);
    let base = serve(fusebox::admin::router(TOKEN).unwrap()).await;
    // What the page sends: the whole name percent-encoded, the expiry as `?for=`.
    let resp = client()
        .post(format!("{base}/breakers/page-redis%2F3/open?for=10m"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(shard.state(), State::ForcedOpen);
    let resp = client()
        .post(format!("{base}/breakers/page-redis%2F3/reset"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(shard.state(), State::Closed);
}

#[tokio::test]
async fn nested_under_a_prefix_the_page_is_the_mount_point() {
    let app = axum::Router::new().nest("/debug/fusebox", fusebox::admin::router(TOKEN).unwrap());
    let base = serve(app).await;
    let resp = client()
        .get(format!("{base}/debug/fusebox"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.text().await.unwrap().starts_with("<!doctype html>"));
    let resp = client()
        .get(format!("{base}/debug/fusebox/breakers"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    // The outer application's root is not the page.
    let resp = client().get(format!("{base}/")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
}
