//! Fleet scope on the admin router (feature `redis`): `GET /fleet`, and the breaker actions
//! with `?scope=fleet&for=10m&by=alice`, which write a fleet override instead of acting here.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::handlers::{json, not_found};
use super::query::Query;
use crate::fleet::{current, Action, FleetError};
use fusebox_settings::parse_duration;

/// `GET /fleet`: every live instance and what it sees, as this instance last read it.
pub(super) async fn view() -> Response {
    match crate::fleet::view() {
        Some(v) => json(&v),
        None => not_joined(),
    }
}

/// `POST /breakers/{name}/{open|close|reset}?scope=fleet&for=<duration>[&by=<who>]`.
pub(super) async fn act(path: &str, q: &Query) -> Response {
    let Some((name, action)) = path
        .rsplit_once('/')
        .and_then(|(n, verb)| Some((n, verb.parse::<Action>().ok()?)))
    else {
        return not_found().await;
    };
    let Some(fleet) = current() else {
        return not_joined();
    };
    let for_ = match (q.get("for"), action) {
        (Some(text), _) => match parse_duration(text) {
            Ok(d) => d,
            Err(e) => return bad_request(format!("bad `for`: {e}\n")),
        },
        (None, Action::Reset) => fleet.config.ttl_or_default() * 2,
        (None, _) => {
            return bad_request(
                "scope=fleet needs an expiry: for=<duration>, e.g. for=10m\n".into(),
            )
        }
    };
    let by = q.get("by").unwrap_or("admin router");
    match fleet.send(name, action, for_, by).await {
        Ok(()) => json(&serde_json::json!({
            "scope": "fleet",
            "breaker": name,
            "action": action,
            "for_s": for_.as_secs_f64(),
            "by": by,
        })),
        Err(e @ (FleetError::BadName { .. } | FleetError::BadDuration { .. })) => {
            bad_request(format!("{e}\n"))
        }
        Err(e @ FleetError::LinkDown { .. }) => {
            (StatusCode::SERVICE_UNAVAILABLE, format!("{e}\n")).into_response()
        }
        Err(e) => (StatusCode::BAD_GATEWAY, format!("{e}\n")).into_response(),
    }
}

fn not_joined() -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        "this instance has not joined a fleet (fusebox::fleet::join)\n",
    )
        .into_response()
}

pub(super) fn bad_request(msg: String) -> Response {
    (StatusCode::BAD_REQUEST, msg).into_response()
}

/// `POST /settings/{kind}/{name}?...&scope=fleet&for=10m&by=alice`: a fleet-wide settings change.
pub(super) async fn settings(
    kind: crate::settings::GuardKind,
    name: &str,
    pairs: Vec<(String, String)>,
    for_: Option<std::time::Duration>,
    q: &Query,
) -> Response {
    let Some(fleet) = current() else {
        return not_joined();
    };
    let Some(for_) = for_ else {
        return bad_request("scope=fleet needs an expiry: for=<duration>, e.g. for=10m\n".into());
    };
    let by = q.get("by").unwrap_or("admin router");
    match fleet
        .send_settings(kind, name, pairs.clone(), for_, by)
        .await
    {
        Ok(()) => json(&serde_json::json!({
            "scope": "fleet",
            "kind": kind,
            "name": name,
            "settings": pairs,
            "for_s": for_.as_secs_f64(),
            "by": by,
        })),
        Err(FleetError::BadSettings { error, .. }) => {
            bad_request(super::settings::refused(kind, name, &pairs, &error))
        }
        Err(e @ (FleetError::BadName { .. } | FleetError::BadDuration { .. })) => {
            bad_request(format!("{e}\n"))
        }
        Err(e @ FleetError::LinkDown { .. }) => {
            (StatusCode::SERVICE_UNAVAILABLE, format!("{e}\n")).into_response()
        }
        Err(e) => (StatusCode::BAD_GATEWAY, format!("{e}\n")).into_response(),
    }
}

/// `DELETE /settings/{kind}/{name}?scope=fleet&by=alice`: ends a fleet-wide settings change on
/// every instance.
pub(super) async fn end_settings(
    kind: crate::settings::GuardKind,
    name: &str,
    q: &Query,
) -> Response {
    let Some(fleet) = current() else {
        return not_joined();
    };
    let by = q.get("by").unwrap_or("admin router");
    match fleet.end_settings(kind, name, by).await {
        Ok(ended) => json(&serde_json::json!({
            "scope": "fleet",
            "kind": kind,
            "name": name,
            "ended": ended,
            "by": by,
        })),
        Err(e @ FleetError::LinkDown { .. }) => {
            (StatusCode::SERVICE_UNAVAILABLE, format!("{e}\n")).into_response()
        }
        Err(e) => (StatusCode::BAD_GATEWAY, format!("{e}\n")).into_response(),
    }
}
