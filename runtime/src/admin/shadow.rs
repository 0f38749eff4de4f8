//! Shadow settings on the admin router (issue 29): set a candidate configuration beside a
//! breaker's live one, promote it, drop it. Every change is logged at WARN with who asked
//! (`by`, and the peer address) and what.
//!
//! | route | does |
//! |---|---|
//! | `POST /shadow/set/{name}?trip_p95=500ms&failure_rate=20[&by=alice]` | [`set_shadow`](crate::breaker::Breaker::set_shadow) with those settings pairs (layered on the settings in force) |
//! | `POST /shadow/promote/{name}[?by=alice]` | [`promote_shadow`](crate::breaker::Breaker::promote_shadow): ends the shadow, its settings now the live ones (a live change), answers them |
//! | `POST /shadow/drop/{name}[?by=alice]` | [`drop_shadow`](crate::breaker::Breaker::drop_shadow) |
//! | `POST /breakers/{name}/shadow?...`, `/breakers/{name}/shadow/promote`, `/breakers/{name}/shadow/drop` | the same, with the name first |
//!
//! The settings travel in the query string (no handler reads a body); a bad one is a 400 with
//! the settings table's message. `GET /breakers/{name}` shows the shadow's figures.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Path, RawQuery};
use axum::http::{Extensions, StatusCode};
use axum::response::{IntoResponse, Response};

use super::handlers::{json, not_found};
use super::query::Query;
use crate::breaker::Breaker;
use crate::registry::key_name::loggable;
use crate::registry::registry;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    Set,
    Promote,
    Drop,
}

impl Verb {
    fn parse(s: &str) -> Option<Verb> {
        Some(match s {
            "set" => Verb::Set,
            "promote" => Verb::Promote,
            "drop" => Verb::Drop,
            _ => return None,
        })
    }

    fn as_str(self) -> &'static str {
        match self {
            Verb::Set => "set_shadow",
            Verb::Promote => "promote_shadow",
            Verb::Drop => "drop_shadow",
        }
    }
}

/// `POST /shadow/{set|promote|drop}/{name}`: the verb first, the whole rest is the name.
pub(super) async fn act(
    Path(path): Path<String>,
    RawQuery(query): RawQuery,
    ext: Extensions,
) -> Response {
    let Some((name, verb)) = path
        .split_once('/')
        .and_then(|(v, name)| Some((name, Verb::parse(v)?)))
    else {
        return not_found().await;
    };
    match Query::parse_once(query.as_deref()) {
        Ok(q) => perform(name, verb, &q, &ext),
        Err(msg) => (StatusCode::BAD_REQUEST, msg).into_response(),
    }
}

/// `POST /breakers/{name}/shadow[/promote|/drop]`, when the path is not itself a breaker's
/// name (a keyed breaker whose key is `shadow` keeps its own meaning there).
pub(super) fn on_breaker_path(path: &str, query: &Query, ext: &Extensions) -> Option<Response> {
    if registry().breaker(path).is_some() {
        return None;
    }
    let (name, verb) = if let Some(name) = path.strip_suffix("/shadow") {
        (name, Verb::Set)
    } else if let Some(name) = path.strip_suffix("/shadow/promote") {
        (name, Verb::Promote)
    } else {
        (path.strip_suffix("/shadow/drop")?, Verb::Drop)
    };
    Some(perform(name, verb, query, ext))
}

fn perform(name: &str, verb: Verb, query: &Query, ext: &Extensions) -> Response {
    let Some(b) = registry().breaker(name) else {
        return (StatusCode::NOT_FOUND, "not found\n").into_response();
    };
    let by = loggable(query.get("by").unwrap_or("admin router"));
    let peer = ext
        .get::<ConnectInfo<SocketAddr>>()
        .map_or_else(|| "unknown".to_owned(), |c| c.0.to_string());
    let settings: Vec<(&str, &str)> = query.pairs().filter(|(k, _)| *k != "by").collect();
    if verb != Verb::Set && !settings.is_empty() {
        return bad_request("promote and drop take only `by`\n".into());
    }
    // `Ok` is the answer of a change made, `Err` of a refusal (not logged).
    let answer: Result<Response, Response> = match verb {
        Verb::Set => match set(&b, &settings) {
            None => Ok(json(&b.metrics())),
            Some(refused) => Err(refused),
        },
        Verb::Promote => match b.promote_shadow() {
            Some(candidate) => Ok(json(&serde_json::json!({
                "breaker": b.name(),
                "promoted": candidate,
                "settings": b.settings_in_force(),
                "note": "now the live settings (a change from admin, no expiry); DELETE /settings/breaker/{name} gives back the ones below it",
            }))),
            // Still there: `promote_shadow` could not put it in force and logged why.
            None if b.shadow().is_some() => Err((
                StatusCode::CONFLICT,
                format!(
                    "the shadow of `{}` could not be put in force (the ERROR log says why); it is kept\n",
                    b.name()
                ),
            )
                .into_response()),
            None => Err(no_shadow(&b)),
        },
        Verb::Drop => match b.drop_shadow() {
            Some(_) => Ok(json(&b.metrics())),
            None => Err(no_shadow(&b)),
        },
    };
    match answer {
        Ok(done) => {
            // Accepted values are trimmed, not cleaned: a CR/LF around one is still in it.
            let text = settings
                .iter()
                .map(|(k, v)| format!("{}={}", loggable(k), loggable(v)))
                .collect::<Vec<_>>()
                .join(" ");
            tracing::warn!(
                breaker = %b.name(),
                action = verb.as_str(),
                settings = %text,
                %by,
                %peer,
                "admin action on a breaker's shadow settings"
            );
            done
        }
        Err(refused) => refused,
    }
}

/// Sets the shadow; the refusal's answer if it was refused.
fn set(b: &Breaker, settings: &[(&str, &str)]) -> Option<Response> {
    if settings.is_empty() {
        return Some(bad_request(
            "give the candidate settings as the query, e.g. ?trip_p95=500ms&failure_rate=20\n"
                .into(),
        ));
    }
    if let Err(e) = b.set_shadow(settings.iter().copied()) {
        let given = settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&");
        let name = b.name();
        return Some(bad_request(format!(
            "shadow settings for `{name}` refused ({given}): {e}\n"
        )));
    }
    None
}

fn no_shadow(b: &Breaker) -> Response {
    let msg = format!("`{}` has no shadow settings\n", b.name());
    (StatusCode::NOT_FOUND, msg).into_response()
}

fn bad_request(msg: String) -> Response {
    (StatusCode::BAD_REQUEST, msg).into_response()
}
