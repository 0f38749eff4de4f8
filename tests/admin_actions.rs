//! Issue 18 items 5 and 8 at the admin router: tokens of at least 16 bytes, actions that no
//! breaker name can make ambiguous, `?for=10m`, and an audit log line naming the peer.
#![cfg(feature = "admin")]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fusebox::admin::{router, AdminError};
use fusebox::{registry, Breaker, State};
use reqwest::{Client, StatusCode};
use serde_json::Value;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

const TOKEN: &str = "t0ken-for-actions";

/// Serves the router on loopback, with or without the peer address in its requests.
async fn serve(connect_info: bool) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = router(TOKEN).unwrap();
    if connect_info {
        let app = app.into_make_service_with_connect_info::<SocketAddr>();
        tokio::spawn(async move { axum::serve(listener, app).await });
    } else {
        tokio::spawn(async move { axum::serve(listener, app).await });
    }
    format!("http://{addr}")
}

async fn post(url: &str) -> (StatusCode, String) {
    let resp = Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
        .post(url)
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    (resp.status(), resp.text().await.unwrap())
}

async fn post_json(url: &str) -> Value {
    let (status, body) = post(url).await;
    assert_eq!(status, StatusCode::OK, "{url}: {body}");
    serde_json::from_str(&body).unwrap()
}

#[test]
fn tokens_shorter_than_16_bytes_are_refused() {
    assert_eq!(
        router("fifteen-bytes-x").err(),
        Some(AdminError::ShortToken { len: 15 })
    );
    assert!(router("sixteen-bytes-xx").is_ok());
    assert_eq!(router("").err(), Some(AdminError::EmptyToken));
    let msg = AdminError::ShortToken { len: 6 }.to_string();
    assert!(msg.contains("16"), "{msg}");
}

#[tokio::test]
async fn a_keyed_breaker_whose_key_is_open_is_never_confused_with_its_base() {
    let template = Breaker::builder("act-amb").config().unwrap();
    let base_breaker = Breaker::builder("act-amb").build().unwrap();
    let keyed = registry().keyed(&template, &"open");
    assert_eq!(keyed.name(), "act-amb/open");
    let base = serve(false).await;

    // The new form: verb first, the whole rest is the name.
    post_json(&format!("{base}/actions/open/act-amb/open")).await;
    assert_eq!(keyed.state(), State::ForcedOpen);
    assert_eq!(base_breaker.state(), State::Closed, "not the base breaker");
    post_json(&format!("{base}/actions/reset/act-amb%2Fopen")).await;
    assert_eq!(keyed.state(), State::Closed);
    post_json(&format!("{base}/actions/close/act-amb")).await;
    assert_eq!(base_breaker.state(), State::ForcedClosed);
    assert_eq!(keyed.state(), State::Closed);

    // The old form is refused where GET on the same path shows another breaker...
    let (status, body) = post(&format!("{base}/breakers/act-amb/open")).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body.contains("/actions/"), "{body}");
    assert_eq!(base_breaker.state(), State::ForcedClosed, "nothing done");
    // ...and keeps working where it is not.
    post_json(&format!("{base}/breakers/act-amb/open/open")).await;
    assert_eq!(keyed.state(), State::ForcedOpen);
    for path in [
        "/actions/explode/act-amb",
        "/actions/open/act-nope",
        "/actions/open",
    ] {
        let (status, _) = post(&format!("{base}{path}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
    }
}

/// `?for=10m&for=1h` says two things: refused, naming the key, and nothing is done (it was
/// read as its first value, silently).
#[tokio::test]
async fn a_query_key_given_twice_is_refused_naming_it() {
    let b = Breaker::builder("act-twice").build().unwrap();
    let base = serve(false).await;
    for url in [
        format!("{base}/actions/open/act-twice?for=10m&for=1h"),
        format!("{base}/breakers/act-twice/open?for=1h&scope=local&for=10m"),
        format!("{base}/actions/close/act-twice?record=false&record=true"),
        format!("{base}/settings/breaker/act-twice?failure_rate=80&failure_rate=90"),
    ] {
        let (status, body) = post(&url).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {body}");
        assert!(body.contains("given twice"), "{url}: {body}");
    }
    assert_eq!(b.state(), State::Closed, "refused requests change nothing");
    assert_eq!(b.config().failure_rate(), 50);
}

#[tokio::test]
async fn a_force_takes_an_optional_duration() {
    let b = Breaker::builder("act-for").build().unwrap();
    let base = serve(false).await;
    let m = post_json(&format!("{base}/actions/open/act-for?for=10m")).await;
    assert_eq!(m["state"], "forced_open");
    let left = m["force_expires_in_s"].as_f64().unwrap();
    assert!((599.0..=600.0).contains(&left), "{left}");
    let m = post_json(&format!("{base}/breakers/act-for/close?for=1h")).await;
    assert_eq!(m["state"], "forced_closed");
    assert!(m["force_expires_in_s"].as_f64().unwrap() > 3599.0);
    let m = post_json(&format!("{base}/actions/open/act-for")).await;
    assert_eq!(m["force_expires_in_s"], Value::Null, "held until changed");
    for query in ["for=0s", "for=ten", "for=", "until=5m", "for=1m&x=1"] {
        let (status, body) = post(&format!("{base}/actions/close/act-for?{query}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
    }
    let (status, _) = post(&format!("{base}/actions/reset/act-for?for=1m")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        b.state(),
        State::ForcedOpen,
        "refused requests change nothing"
    );
}

/// WARN events: (breaker, action, peer).
#[derive(Clone, Default)]
struct Audit(Arc<Mutex<Vec<(String, String, String)>>>);

#[derive(Default)]
struct Fields(String, String, String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let v = format!("{value:?}").trim_matches('"').to_owned();
        match field.name() {
            "breaker" => self.0 = v,
            "action" => self.1 = v,
            "peer" => self.2 = v,
            _ => {}
        }
    }
}

/// The audit layer, installed once for the whole binary: a thread-local subscriber
/// (`set_default`) misses an event whose callsite another test's thread registered first with
/// no subscriber, which the admin's WARN callsites are, now that several tests act.
fn audit() -> Audit {
    static AUDIT: std::sync::OnceLock<Audit> = std::sync::OnceLock::new();
    AUDIT
        .get_or_init(|| {
            let a = Audit::default();
            tracing::subscriber::set_global_default(tracing_subscriber::registry().with(a.clone()))
                .expect("no other global subscriber in this test binary");
            a
        })
        .clone()
}

impl<S: Subscriber> Layer<S> for Audit {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        if *event.metadata().level() == Level::WARN {
            let mut f = Fields::default();
            event.record(&mut f);
            if !f.1.is_empty() {
                self.0.lock().unwrap().push((f.0, f.1, f.2));
            }
        }
    }
}

#[tokio::test(flavor = "current_thread")]
async fn every_action_logs_who_did_what() {
    let audit = audit();
    Breaker::builder("act-audit").build().unwrap();
    let with_peer = serve(true).await;
    let without = serve(false).await;
    post_json(&format!("{with_peer}/actions/open/act-audit?for=5m")).await;
    post_json(&format!("{without}/breakers/act-audit/reset")).await;
    // Other tests of this binary act on their own breakers under the same subscriber.
    let log: Vec<_> = (audit.0.lock().unwrap().iter())
        .filter(|e| e.0 == "act-audit")
        .cloned()
        .collect();
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(
        (log[0].0.as_str(), log[0].1.as_str()),
        ("act-audit", "force_open")
    );
    assert!(log[0].2.starts_with("127.0.0.1:"), "{log:?}");
    assert_eq!(log[1].1, "reset");
    assert_eq!(log[1].2, "unknown", "no ConnectInfo: said so");
}

#[tokio::test(start_paused = true)]
async fn a_ramping_breaker_shows_closed_with_its_share() {
    // Issue 22: through half-open on the paused clock, then served for real.
    let b = Breaker::builder("act-ramp")
        .window_calls(1)
        .min_calls(1)
        .open_for(Duration::from_secs(1))
        .half_open_calls(1)
        .ramp(Duration::from_secs(3600))
        .build()
        .unwrap();
    let _ = b.call(async { Err::<(), _>("down") }).await;
    tokio::time::advance(Duration::from_secs(1)).await;
    b.call(async { Ok::<_, &str>(()) }).await.unwrap();
    tokio::time::resume();
    let base = serve(false).await;
    let resp = Client::new()
        .get(format!("{base}/breakers/act-ramp"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let m: Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    assert_eq!(m["state"], "closed");
    let share = m["ramp_share"].as_f64().unwrap();
    assert!((0.05..0.06).contains(&share), "{m}");
    assert!(m["rejected_by_reason"]["ramp"].is_u64(), "{m}");
}

#[tokio::test]
async fn a_close_says_whether_it_records() {
    let b = Breaker::builder("act-record").build().unwrap();
    let base = serve(false).await;
    let m = post_json(&format!("{base}/actions/close/act-record")).await;
    assert_eq!(
        (m["state"].as_str(), m["recording"].as_bool()),
        (Some("forced_closed"), Some(true))
    );
    let m = post_json(&format!(
        "{base}/actions/close/act-record?record=false&for=10m"
    ))
    .await;
    assert_eq!(
        (m["state"].as_str(), m["recording"].as_bool()),
        (Some("forced_closed"), Some(false))
    );
    let _: Result<(), fusebox::Error<()>> = b.call(async { Err(()) }).await;
    assert_eq!(b.metrics().window_calls, 0, "recorded nothing");
    for query in ["record=no", "record="] {
        let (status, body) = post(&format!("{base}/actions/close/act-record?{query}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
    }
    let (status, _) = post(&format!("{base}/actions/open/act-record?record=false")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let m = post_json(&format!("{base}/actions/reset/act-record")).await;
    assert_eq!(m["recording"].as_bool(), Some(true));
}
