//! The admin handlers: look up by full registry name, act, answer JSON or Prometheus text.

use axum::extract::Path;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::breaker::Breaker;
use crate::metrics::export::{self, PROMETHEUS_CONTENT_TYPE};
use crate::metrics::metrics;
use crate::registry::registry;

pub(super) async fn list() -> Response {
    json(&metrics())
}

pub(super) async fn prometheus() -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(PROMETHEUS_CONTENT_TYPE),
        )],
        export::prometheus(),
    )
        .into_response()
}

/// `GET /breakers/{name}`: the whole rest of the path is the name, so `redis/3` works unencoded.
pub(super) async fn show(Path(path): Path<String>) -> Response {
    if let Some(b) = registry().breaker(&path) {
        return json(&b.metrics());
    }
    match action(&path) {
        // `GET /breakers/redis/open` for an existing `redis`: the route exists, the method does not.
        Some((name, _)) if registry().breaker(name).is_some() => method_not_allowed("POST"),
        _ => not_found().await,
    }
}

/// `POST /breakers/{name}/{open|close|reset}`.
pub(super) async fn act(Path(path): Path<String>) -> Response {
    match action(&path) {
        Some((name, act)) => match registry().breaker(name) {
            Some(b) => {
                act(&b);
                json(&b.metrics())
            }
            None => not_found().await,
        },
        None if registry().breaker(&path).is_some() => method_not_allowed("GET"),
        None => not_found().await,
    }
}

pub(super) async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "not found\n").into_response()
}

type Action = fn(&Breaker);

/// Splits `name/open` into the breaker name and what to do with it.
fn action(path: &str) -> Option<(&str, Action)> {
    let (name, verb) = path.rsplit_once('/')?;
    let act: Action = match verb {
        "open" => Breaker::force_open,
        "close" => Breaker::force_close,
        "reset" => Breaker::reset,
        _ => return None,
    };
    Some((name, act))
}

fn method_not_allowed(allow: &'static str) -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, HeaderValue::from_static(allow))],
    )
        .into_response()
}

fn json<T: Serialize>(v: &T) -> Response {
    match serde_json::to_vec(v) {
        Ok(body) => (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body,
        )
            .into_response(),
        // The snapshot types always serialize; answer 500 rather than panic if that changes.
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}
