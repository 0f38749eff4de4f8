//! Issue 29, shadow settings at the admin router over real HTTP on loopback: set a candidate
//! beside a running breaker's live settings, see it in the JSON, promote it, drop it; each
//! change logged at WARN with who asked; a bad setting is a 400 naming it.
#![cfg(feature = "admin")]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use fusebox::{registry, Breaker, Error, State};
use reqwest::{Client, StatusCode};
use serde_json::Value;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

const TOKEN: &str = "t0ken-for-the-shadow-tests";

/// Every WARN event, its fields as one line.
#[derive(Clone, Default)]
struct Warns(Arc<Mutex<Vec<String>>>);

struct Line(String);
impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={:?} ", field.name(), value));
    }
}

impl<S: Subscriber> Layer<S> for Warns {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        if *event.metadata().level() == Level::WARN {
            let mut line = Line(String::new());
            event.record(&mut line);
            self.0.lock().unwrap().push(line.0);
        }
    }
}

fn warns() -> Warns {
    static W: OnceLock<Warns> = OnceLock::new();
    W.get_or_init(|| {
        let w = Warns::default();
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(w.clone()))
            .unwrap();
        w
    })
    .clone()
}

async fn serve() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = fusebox::admin::router(TOKEN)
        .unwrap()
        .into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

async fn post(url: String) -> (StatusCode, String) {
    let client = Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let resp = client.post(url).bearer_auth(TOKEN).send().await.unwrap();
    (resp.status(), resp.text().await.unwrap())
}

async fn fail_one_in_five(b: &Breaker) {
    for i in 0..10 {
        let _: Result<(), Error<&str>> = b
            .call(async move {
                if i % 5 == 4 {
                    Err("boom")
                } else {
                    Ok(())
                }
            })
            .await;
    }
}

#[tokio::test]
async fn an_operator_sets_sees_promotes_and_drops_a_shadow_over_http() {
    let warns = warns();
    let name = "admin-shadow-payments";
    let b = Breaker::builder(name).window_calls(10).build().unwrap();
    let base = serve().await;

    let (status, body) = post(format!(
        "{base}/shadow/set/{name}?window_calls=10&min_calls=5&failure_rate=20&by=alice"
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let json: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(json["shadow"]["settings"]["failure_rate"], 20, "{json}");
    assert_eq!(json["state"], "closed");

    fail_one_in_five(&b).await;
    let text = Client::new()
        .get(format!("{base}/breakers/{name}"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let shown: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(shown["state"], "closed", "the live breaker refused nothing");
    assert_eq!(shown["shadow"]["state"], "open", "{shown}");
    assert_eq!(shown["shadow"]["would_have_refused"], 5);
    assert_eq!(shown["shadow"]["calls_seen"], 10);

    // Promote: the candidate comes back, the shadow ends, and it is now the settings in force
    // (a live change over the code's, which stay the code's).
    let (status, body) = post(format!("{base}/breakers/{name}/shadow/promote?by=bob")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let promoted: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(promoted["promoted"]["failure_rate"], 20);
    assert_eq!(promoted["promoted"]["name"], name);
    assert!(b.shadow().is_none());
    assert_eq!(b.config().failure_rate(), 50, "the code's settings");
    assert_eq!(
        b.config_in_force().failure_rate(),
        20,
        "the promoted ones, in force"
    );
    b.clear_settings_change();
    assert_eq!(b.config_in_force().failure_rate(), 50);

    // Set again through the name-first form, then drop.
    let (status, _) = post(format!("{base}/breakers/{name}/shadow?trip_p95=500ms")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(b.shadow().unwrap().settings.slow().is_some());
    let (status, body) = post(format!("{base}/shadow/drop/{name}?by=carol")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let json: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(json["shadow"], Value::Null);
    assert!(b.shadow().is_none());

    let lines: Vec<String> = warns
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains(name) && l.contains("shadow settings"))
        .cloned()
        .collect();
    assert_eq!(lines.len(), 4, "{lines:#?}");
    assert!(
        lines[0].contains("set_shadow") && lines[0].contains("alice"),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains("failure_rate=20") && lines[0].contains("127.0.0.1"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("promote_shadow") && lines[1].contains("bob"),
        "{}",
        lines[1]
    );
    assert!(
        lines[3].contains("drop_shadow") && lines[3].contains("carol"),
        "{}",
        lines[3]
    );
    assert_eq!(registry().breaker(name).unwrap().state(), State::Closed);
}

#[tokio::test]
async fn bad_shadow_requests_are_refused_with_the_reason() {
    let name = "admin-shadow-bad";
    let b = Breaker::builder(name).build().unwrap();
    let base = serve().await;
    let (status, body) = post(format!("{base}/shadow/set/{name}?failure_rate=120")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body.contains("failure_rate") && body.contains("120"),
        "{body}"
    );
    let (status, body) = post(format!("{base}/shadow/set/{name}?timeout=fast")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("timeout"), "{body}");
    let (status, _) = post(format!("{base}/shadow/set/{name}")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "no settings");
    assert!(b.shadow().is_none());
    let (status, _) = post(format!("{base}/shadow/drop/{name}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "no shadow to drop");
    let (status, _) = post(format!("{base}/shadow/promote/{name}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "no shadow to promote");
    let (status, _) = post(format!("{base}/shadow/set/no-such-breaker?failure_rate=20")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = post(format!("{base}/shadow/bogus/{name}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Without the token: 401, nothing set.
    let resp = Client::new()
        .post(format!("{base}/shadow/set/{name}?failure_rate=20"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert!(b.shadow().is_none());
}
