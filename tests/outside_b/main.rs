//! Issues 29 (settings outside the code: overrides, live changes, shadow settings) and 32
//! (fleet mode under faults), tested as a user reads them: through the facade's public API,
//! the admin router over real HTTP on loopback and a real `redis-server`.
//!
//! The tests share the process's registry (each uses names of its own) and one fleet per
//! process (the fleet tests take turns). Paused-clock tests make no IO; real sockets run on
//! real time, where every wait has a deadline and polls.
//!
//! One module per concept: overrides given at start (`overrides`), live changes over them
//! (`live_changes`, `bulkheads`), the admin router's settings and shadow endpoints
//! (`admin_http`), live changes under load (`under_load`), and fleet mode: fleet-wide settings
//! changes (`fleet_settings`), the fleet's gauges (`fleet_gauges`) and a Redis that dies,
//! freezes or refuses writes (`fleet_faults`). The client error, the settings-in-force reader,
//! the admin server with its HTTP client and the keyed breaker two modules call are here.
#![cfg(all(
    feature = "admin",
    feature = "redis",
    feature = "serde",
    feature = "metrics"
))]

#[path = "../fleet_support/mod.rs"]
mod fleet_support;

use std::time::{Duration, Instant};

use fleet_support::{link_down, runtime, turn, within, RedisServer};
use fusebox::fleet::{self, FleetConfig, FleetError, LinkFault};
use fusebox::settings::{GuardKind, Overrides, Source};
use fusebox::{breaker, bulkhead, registry, Breaker, Bulkhead, Rejection, State};
use reqwest::{Method, StatusCode};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum DepError {
    Refused(Rejection),
}

impl From<Rejection> for DepError {
    fn from(r: Rejection) -> Self {
        DepError::Refused(r)
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// `(value, source)` of `key` among settings in force.
fn in_force(settings: &[fusebox::settings::SettingInForce], key: &str) -> (String, Source) {
    let s = settings
        .iter()
        .find(|s| s.key == key)
        .unwrap_or_else(|| panic!("no `{key}` in {settings:?}"));
    (s.value.clone(), s.source)
}

const TOKEN: &str = "outside-b-token-0123456789";

/// The admin router behind `TOKEN` on a free loopback port: its base URL.
async fn serve() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = fusebox::admin::router(TOKEN)
        .unwrap()
        .into_make_service_with_connect_info::<std::net::SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// One request to the admin router with the token: the status and the body.
async fn http(method: Method, url: &str) -> (StatusCode, String) {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let resp = client
        .request(method, url)
        .header("authorization", format!("Bearer {TOKEN}"))
        .send()
        .await
        .unwrap();
    let status = resp.status();
    (status, resp.text().await.unwrap())
}

/// A keyed breaker whose keys `live_changes` and `fleet_settings` both change.
#[breaker(name = "ob-keyed", key = region, timeout = "800ms")]
async fn keyed_call(region: &str) -> Result<(), DepError> {
    let _ = region;
    Ok(())
}

// One module per concept, each headed by what it covers.
mod admin_http;
mod bulkheads;
mod fleet_faults;
mod fleet_gauges;
mod fleet_settings;
mod live_changes;
mod overrides;
mod under_load;
