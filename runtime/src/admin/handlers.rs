//! The admin handlers: look up by full registry name, act (and log who did), answer JSON or
//! Prometheus text.

use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::{ConnectInfo, Path, RawQuery};
use axum::http::{header, Extensions, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use fusebox_settings::parse_duration;

use super::query::Query;
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

/// `POST /breakers/{name}/{open|close|reset}[?for=10m]`, the old form. Refused with 409 when
/// `{name}/{verb}` is itself a breaker (a keyed breaker whose key is `open`): `GET` on the same
/// path shows that breaker, so a `POST` there could mean either.
pub(super) async fn act(
    Path(path): Path<String>,
    RawQuery(query): RawQuery,
    ext: Extensions,
) -> Response {
    let query = match Query::parse_once(query.as_deref()) {
        Ok(q) => q,
        Err(msg) => return (StatusCode::BAD_REQUEST, msg).into_response(),
    };
    if let Some(answer) = super::shadow::on_breaker_path(&path, &query, &ext) {
        return answer;
    }
    match action(&path) {
        Some(_) if registry().breaker(&path).is_some() => conflict(&path),
        Some((name, verb)) => match scope(&query) {
            Ok(Scope::Local) => perform(name, verb, &query, &ext),
            #[cfg(feature = "redis")]
            Ok(Scope::Fleet) => super::fleet::act(&path, &query).await,
            Err(msg) => (StatusCode::BAD_REQUEST, msg).into_response(),
        },
        None if registry().breaker(&path).is_some() => method_not_allowed("GET"),
        None => not_found().await,
    }
}

/// `POST /actions/{open|close|reset}/{name}[?for=10m]`: the verb first and the whole rest of
/// the path is the name, so no breaker name can be read as a verb.
pub(super) async fn act_on(
    Path(path): Path<String>,
    RawQuery(query): RawQuery,
    ext: Extensions,
) -> Response {
    let query = match Query::parse_once(query.as_deref()) {
        Ok(q) => q,
        Err(msg) => return (StatusCode::BAD_REQUEST, msg).into_response(),
    };
    // The verb as written is needed only for a fleet override.
    #[cfg_attr(not(feature = "redis"), allow(unused_variables))]
    let Some((verb_text, name, verb)) = path
        .split_once('/')
        .and_then(|(v, name)| Some((v, name, Verb::parse(v)?)))
    else {
        return not_found().await;
    };
    match scope(&query) {
        Ok(Scope::Local) => perform(name, verb, &query, &ext),
        // The fleet handler reads `{name}/{verb}`, splitting at the last slash.
        #[cfg(feature = "redis")]
        Ok(Scope::Fleet) => super::fleet::act(&format!("{name}/{verb_text}"), &query).await,
        Err(msg) => (StatusCode::BAD_REQUEST, msg).into_response(),
    }
}

/// Where an action applies: this instance, or (feature `redis`) every instance of the fleet.
enum Scope {
    Local,
    #[cfg(feature = "redis")]
    Fleet,
}

/// `?scope=local` (the default) or `?scope=fleet`; anything else is refused (a 400).
fn scope(query: &Query) -> Result<Scope, &'static str> {
    match query.get("scope") {
        None | Some("local") => Ok(Scope::Local),
        #[cfg(feature = "redis")]
        Some("fleet") => Ok(Scope::Fleet),
        #[cfg(not(feature = "redis"))]
        Some("fleet") => Err("scope=fleet needs fusebox's `redis` feature\n"),
        Some(_) => Err("scope must be `local` or `fleet`\n"),
    }
}

fn perform(name: &str, verb: Verb, query: &Query, ext: &Extensions) -> Response {
    let Some(b) = registry().breaker(name) else {
        return (StatusCode::NOT_FOUND, "not found\n").into_response();
    };
    let for_ = match expiry(query, verb) {
        Ok(d) => d,
        Err(msg) => return (StatusCode::BAD_REQUEST, msg).into_response(),
    };
    // Who did what: the peer address when the server was built with `ConnectInfo`.
    let peer = ext
        .get::<ConnectInfo<SocketAddr>>()
        .map_or_else(|| "unknown".to_owned(), |c| c.0.to_string());
    tracing::warn!(
        breaker = %b.name(),
        action = verb.as_str(),
        r#for = ?for_,
        %peer,
        "admin action on a circuit breaker"
    );
    let record = match recording(query, verb) {
        Ok(r) => r,
        Err(msg) => return (StatusCode::BAD_REQUEST, msg).into_response(),
    };
    match (verb, for_, record) {
        (Verb::Open, None, _) => b.force_open(),
        (Verb::Open, Some(d), _) => b.force_open_for(d),
        (Verb::Close, None, true) => b.force_close(),
        (Verb::Close, Some(d), true) => b.force_close_for(d),
        (Verb::Close, None, false) => b.force_close_unrecorded(),
        (Verb::Close, Some(d), false) => b.force_close_unrecorded_for(d),
        (Verb::Reset, _, _) => b.reset(),
    }
    json(&b.metrics())
}

/// `record=false` on a close: forced closed without recording into the window (the
/// default, `record=true`, records, as `force_close` does).
fn recording(query: &Query, verb: Verb) -> Result<bool, &'static str> {
    match (query.get("record"), verb) {
        (None, _) => Ok(true),
        (Some(_), Verb::Open | Verb::Reset) => Err("`record` applies to close only\n"),
        (Some("true"), Verb::Close) => Ok(true),
        (Some("false"), Verb::Close) => Ok(false),
        (Some(_), Verb::Close) => Err("`record` takes true or false\n"),
    }
}

/// The optional `for=<duration>` of a local force; besides it only `scope=local` (and
/// `record` on a close) is accepted.
fn expiry(query: &Query, verb: Verb) -> Result<Option<Duration>, String> {
    if query
        .keys()
        .any(|k| k != "for" && k != "scope" && k != "record")
    {
        return Err(
            "a local action takes only `for` (and `record` on a close), e.g. ?for=10m\n".into(),
        );
    }
    let Some(text) = query.get("for") else {
        return Ok(None);
    };
    if verb == Verb::Reset {
        return Err("`for` applies to open and close, not reset\n".into());
    }
    match parse_duration(text) {
        Ok(d) if !d.is_zero() => Ok(Some(d)),
        _ => Err("`for` takes a positive duration like 10m or 1h30m\n".into()),
    }
}

fn conflict(path: &str) -> Response {
    let msg = format!(
        "ambiguous: `{path}` is a breaker; use POST /actions/{{open|close|reset}}/{{name}}\n"
    );
    (StatusCode::CONFLICT, msg).into_response()
}

pub(super) async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "not found\n").into_response()
}

/// What an operator can do to a breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    Open,
    Close,
    Reset,
}

impl Verb {
    fn parse(s: &str) -> Option<Verb> {
        Some(match s {
            "open" => Verb::Open,
            "close" => Verb::Close,
            "reset" => Verb::Reset,
            _ => return None,
        })
    }

    fn as_str(self) -> &'static str {
        match self {
            Verb::Open => "force_open",
            Verb::Close => "force_close",
            Verb::Reset => "reset",
        }
    }
}

/// Splits `name/open` into the breaker name and what to do with it.
fn action(path: &str) -> Option<(&str, Verb)> {
    let (name, verb) = path.rsplit_once('/')?;
    Some((name, Verb::parse(verb)?))
}

fn method_not_allowed(allow: &'static str) -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, HeaderValue::from_static(allow))],
    )
        .into_response()
}

pub(super) fn json<T: Serialize>(v: &T) -> Response {
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
