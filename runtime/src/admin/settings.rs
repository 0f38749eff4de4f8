//! Live settings on the admin router (issue 29): `POST /settings/{breaker|bulkhead}/{name}?key=value&...[&for=10m][&by=alice]`
//! changes settings while running, `DELETE` on the same path ends the change; with
//! `scope=fleet` (feature `redis`) the change, or its end, goes to every instance through Redis.
//!
//! The settings are the query's pairs (no handler reads a body), each checked by the settings
//! table over the settings in force below the change (the start's overrides, else the code's);
//! a bad one is a 400 naming the key, the value and the reason, and changes nothing.

use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::{ConnectInfo, Path, RawQuery};
use axum::http::{Extensions, StatusCode};
use axum::response::{IntoResponse, Response};

use fusebox_settings::{parse_duration, Source};

use super::handlers::{json, not_found};
use super::query::Query;
use crate::registry::key_name::loggable;
use crate::registry::registry;
use crate::settings::GuardKind;

/// The query keys that are not settings.
const RESERVED: [&str; 3] = ["for", "by", "scope"];

/// `breaker/{name}` or `bulkhead/{name}`: the whole rest of the path is the name.
fn target(path: &str) -> Option<(GuardKind, &str)> {
    let (kind, name) = path.split_once('/')?;
    let kind = match kind {
        "breaker" | "breakers" => GuardKind::Breaker,
        "bulkhead" | "bulkheads" => GuardKind::Bulkhead,
        _ => return None,
    };
    (!name.is_empty()).then_some((kind, name))
}

/// Who asked, for the WARN line: `by` if given (encoded where it needs to be, so a request
/// cannot forge a log line), and the peer address when the server has `ConnectInfo`.
fn who(q: &Query, ext: &Extensions) -> String {
    let peer = ext
        .get::<ConnectInfo<SocketAddr>>()
        .map_or_else(|| "unknown".to_owned(), |c| c.0.to_string());
    match q.get("by") {
        Some(by) => format!("{} ({peer})", loggable(by)),
        None => peer,
    }
}

fn bad_request(msg: String) -> Response {
    (StatusCode::BAD_REQUEST, msg).into_response()
}

/// `for=<duration>`, positive.
fn expiry(q: &Query) -> Result<Option<Duration>, &'static str> {
    match q.get("for").map(parse_duration) {
        None => Ok(None),
        Some(Ok(d)) if !d.is_zero() => Ok(Some(d)),
        Some(_) => Err("`for` takes a positive duration like 10m or 1h30m\n"),
    }
}

/// `POST /settings/{breaker|bulkhead}/{name}?key=value...`
pub(super) async fn change(
    Path(path): Path<String>,
    RawQuery(query): RawQuery,
    ext: Extensions,
) -> Response {
    let q = match Query::parse_once(query.as_deref()) {
        Ok(q) => q,
        Err(msg) => return (StatusCode::BAD_REQUEST, msg).into_response(),
    };
    let Some((kind, name)) = target(&path) else {
        return not_found().await;
    };
    let pairs: Vec<(String, String)> = q
        .pairs()
        .filter(|(k, _)| !RESERVED.contains(k))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    if pairs.is_empty() {
        return bad_request(
            "no setting given: add them as the query, e.g. ?failure_rate=80&timeout=2s\n".into(),
        );
    }
    let for_ = match expiry(&q) {
        Ok(d) => d,
        Err(msg) => return bad_request(msg.into()),
    };
    match q.get("scope") {
        None | Some("local") => {}
        #[cfg(feature = "redis")]
        Some("fleet") => return super::fleet::settings(kind, name, pairs, for_, &q).await,
        #[cfg(not(feature = "redis"))]
        Some("fleet") => {
            return bad_request("scope=fleet needs fusebox's `redis` feature\n".into())
        }
        Some(_) => return bad_request("scope must be `local` or `fleet`\n".into()),
    }
    let by = who(&q, &ext);
    let done = match kind {
        GuardKind::Breaker => registry().breaker(name).map(|b| {
            b.change_settings(pairs.iter().map(|(k, v)| (k, v)), Source::Admin, for_)
                .map(|()| json(&b.metrics()))
        }),
        GuardKind::Bulkhead => registry().bulkhead(name).map(|b| {
            b.change_settings(pairs.iter().map(|(k, v)| (k, v)), Source::Admin, for_)
                .map(|()| json(&b.metrics()))
        }),
    };
    match done {
        None => not_found().await,
        Some(Err(e)) => bad_request(refused(kind, name, &pairs, &e)),
        Some(Ok(r)) => {
            // The guard's own field (`breaker` or `bulkhead`), as every other log line has it.
            match kind {
                GuardKind::Breaker => tracing::warn!(
                    breaker = %name,
                    settings = ?pairs,
                    r#for = ?for_,
                    by = %by,
                    "admin changed settings while running"
                ),
                GuardKind::Bulkhead => tracing::warn!(
                    bulkhead = %name,
                    settings = ?pairs,
                    r#for = ?for_,
                    by = %by,
                    "admin changed settings while running"
                ),
            }
            r
        }
    }
}

/// The 400's text for a change the settings table refused: the breaker or bulkhead, the pair
/// at fault as given, and the table's reason. The table's words name the key only where the
/// key is the reason (a bad duration names its text alone), so the pair is found here.
pub(super) fn refused(
    kind: GuardKind,
    name: &str,
    pairs: &[(String, String)],
    e: &fusebox_settings::ConfigError,
) -> String {
    use fusebox_settings::ConfigError;
    let named = e.keys();
    let at_fault = pairs.iter().rev().find(|(k, v)| match e {
        ConfigError::UnknownSetting { key } | ConfigError::UnknownRetrySetting { key } => k == key,
        ConfigError::BadDuration { text } => v.trim() == text.trim(),
        _ => named.contains(&k.as_str()),
    });
    let given = match at_fault {
        Some((k, v)) => format!("`{k}` = {v:?}"),
        None => pairs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&"),
    };
    format!("bad setting for {kind} `{name}`: {given}: {e}\n")
}

/// `DELETE /settings/{breaker|bulkhead}/{name}`: the settings below the change return.
pub(super) async fn end(
    Path(path): Path<String>,
    RawQuery(query): RawQuery,
    ext: Extensions,
) -> Response {
    let q = match Query::parse_once(query.as_deref()) {
        Ok(q) => q,
        Err(msg) => return (StatusCode::BAD_REQUEST, msg).into_response(),
    };
    let Some((kind, name)) = target(&path) else {
        return not_found().await;
    };
    match q.get("scope") {
        None | Some("local") => {}
        #[cfg(feature = "redis")]
        Some("fleet") => return super::fleet::end_settings(kind, name, &q).await,
        #[cfg(not(feature = "redis"))]
        Some("fleet") => {
            return bad_request("scope=fleet needs fusebox's `redis` feature\n".into())
        }
        Some(_) => return bad_request("scope must be `local` or `fleet`\n".into()),
    }
    let by = who(&q, &ext);
    let r = match kind {
        GuardKind::Breaker => registry()
            .breaker(name)
            .map(|b| (b.clear_settings_change(), json(&b.metrics()))),
        GuardKind::Bulkhead => registry()
            .bulkhead(name)
            .map(|b| (b.clear_settings_change(), json(&b.metrics()))),
    };
    match r {
        None => not_found().await,
        Some((ended, r)) => {
            tracing::warn!(%kind, name, ended, by = %by, "admin ended a settings change");
            r
        }
    }
}
