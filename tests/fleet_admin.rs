//! The admin router's fleet scope against a real `redis-server`, in one process: a fleet
//! override from `POST ...?scope=fleet&for=..&by=..`, `GET /fleet`, the link gauge, the errors.
//!
//! Real sockets run on real time: every wait has a deadline and polls.
#![cfg(all(feature = "admin", feature = "redis"))]

mod fleet_support;

use std::time::Duration;

use fleet_support::RedisServer;
use fusebox::fleet::{self, FleetConfig, FleetError};
use fusebox::{Breaker, State};
use reqwest::{Client, StatusCode};
use serde_json::Value;

const TOKEN: &str = "fleet-t0ken-of-16-bytes";

async fn send(method: reqwest::Method, url: &str) -> (StatusCode, String) {
    let resp = Client::new()
        .request(method, url)
        .header("authorization", format!("Bearer {TOKEN}"))
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .unwrap();
    (resp.status(), resp.text().await.unwrap())
}

async fn post(url: &str) -> (StatusCode, String) {
    send(reqwest::Method::POST, url).await
}

async fn delete(url: &str) -> (StatusCode, String) {
    send(reqwest::Method::DELETE, url).await
}

async fn get(url: &str) -> String {
    let (status, body) = send(reqwest::Method::GET, url).await;
    assert_eq!(status, StatusCode::OK, "{url}");
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_override_from_the_admin_router_is_applied_listed_and_gauged() {
    let Some(redis) = RedisServer::start("admin") else {
        return;
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(
        async move { axum::serve(listener, fusebox::admin::router(TOKEN).unwrap()).await },
    );
    let pay = Breaker::builder("fleet-admin-pay").build().unwrap();

    // Not joined yet: the fleet scope says so instead of acting locally.
    let (status, _) = post(&format!(
        "{base}/breakers/fleet-admin-pay/open?scope=fleet&for=1m"
    ))
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(pay.state(), State::Closed);

    let fleet = fleet::join(FleetConfig::new(redis.url(), "adm", "pod-1"))
        .await
        .unwrap();
    assert_eq!(
        fleet.status().link,
        fleet::LinkState::Up,
        "join waited for the first read"
    );
    let again = fleet::join(FleetConfig::new(redis.url(), "adm", "pod-2")).await;
    assert_eq!(again.err(), Some(FleetError::AlreadyJoined));

    let (status, body) = post(&format!("{base}/breakers/fleet-admin-pay/open?scope=fleet")).await;
    assert_eq!(
        (status, body.contains("for=")),
        (StatusCode::BAD_REQUEST, true),
        "{body}"
    );
    let (status, _) = post(&format!(
        "{base}/breakers/fleet-admin-pay/open?scope=fleet&for=soon"
    ))
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = post(&format!(
        "{base}/breakers/fleet-admin-pay/open?scope=planet"
    ))
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let (status, body) = post(&format!(
        "{base}/breakers/fleet-admin-pay/open?scope=fleet&for=10m&by=carol%40ops"
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let sent: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (sent["action"].as_str(), sent["by"].as_str()),
        (Some("force_open"), Some("carol@ops"))
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while pay.state() != State::ForcedOpen {
        assert!(
            tokio::time::Instant::now() < deadline,
            "not applied within 2 s"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }

    let view: Value = serde_json::from_str(&get(&format!("{base}/fleet")).await).unwrap();
    assert_eq!(view["status"]["link"], "up");
    assert_eq!(view["status"]["overrides"][0]["by"], "carol@ops");
    let me = &view["instances"][0];
    assert_eq!(me["instance"], "pod-1");
    let b = me["breakers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "fleet-admin-pay")
        .unwrap();
    assert_eq!(
        (b["state"].as_str(), b["by_fleet"].as_str()),
        (Some("forced_open"), Some("override"))
    );

    let text = get(&format!("{base}/metrics")).await;
    assert!(
        text.contains("fusebox_fleet_link_up{service=\"adm\",instance=\"pod-1\"} 1\n"),
        "{text}"
    );
    assert!(
        text.contains("fusebox_fleet_overrides{service=\"adm\",instance=\"pod-1\"} 1\n"),
        "{text}"
    );

    // A fleet reset replaces the override everywhere (default expiry: two TTLs).
    let (status, _) = post(&format!(
        "{base}/breakers/fleet-admin-pay/reset?scope=fleet&by=carol"
    ))
    .await;
    assert_eq!(status, StatusCode::OK);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while pay.state() != State::Closed {
        assert!(
            tokio::time::Instant::now() < deadline,
            "reset not applied within 2 s"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }

    // A fleet-wide settings change, then its end fleet-wide by DELETE: this instance's code
    // settings are back at once, and Redis lists nothing that a later read could re-apply.
    let set = Breaker::builder("fleet-admin-set")
        .failure_rate(50)
        .build()
        .unwrap();
    let rate = |b: &Breaker| {
        let s = b.settings_in_force();
        let r = s.iter().find(|s| s.key == "failure_rate").unwrap();
        format!("{}/{}", r.value, r.source)
    };
    let (status, body) = post(&format!(
        "{base}/settings/breaker/fleet-admin-set?failure_rate=80&scope=fleet&for=10m&by=dave"
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while rate(&set) != "80/fleet" {
        assert!(
            tokio::time::Instant::now() < deadline,
            "fleet change not applied within 3 s: {}",
            rate(&set)
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let (status, body) = delete(&format!(
        "{base}/settings/breaker/fleet-admin-set?scope=fleet&by=dave"
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let ended: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (ended["scope"].as_str(), ended["ended"].as_bool()),
        (Some("fleet"), Some(true))
    );
    assert_eq!(rate(&set), "50/code", "ended here at once");
    // Two reads of the fleet later it has not come back.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(rate(&set), "50/code", "not re-applied from Redis");
    let (status, body) = delete(&format!(
        "{base}/settings/breaker/fleet-admin-set?scope=fleet"
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["ended"],
        false
    );
    let (status, _) = delete(&format!(
        "{base}/settings/breaker/fleet-admin-set?scope=planet"
    ))
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    fleet.leave().await;
    assert!(fleet::status().is_none());
    assert!(!fusebox::export::prometheus().contains("fusebox_fleet_link_up"));
}
