//! Admin HTTP endpoints (feature `admin`): an axum [`Router`] a service mounts on its debug port.
//!
//! | route | answer |
//! |---|---|
//! | `GET /` | the operator's page (HTML; the one route without the token, as it holds no data) |
//! | `GET /breakers` | the JSON snapshot: `{"breakers": [...], "bulkheads": [...]}` |
//! | `GET /metrics` | Prometheus text |
//! | `GET /breakers/{name}` | one breaker's JSON figures |
//! | `POST /actions/open/{name}` | [`force_open`](crate::breaker::Breaker::force_open), answers the new figures |
//! | `POST /actions/open/{name}?for=10m` | [`force_open_for`](crate::breaker::Breaker::force_open_for) ten minutes |
//! | `POST /actions/close/{name}[?for=10m]` | [`force_close`](crate::breaker::Breaker::force_close) (`_for`): records into the window |
//! | `POST /actions/close/{name}?record=false[&for=10m]` | [`force_close_unrecorded`](crate::breaker::Breaker::force_close_unrecorded) (`_for`): records nothing |
//! | `POST /actions/reset/{name}` | [`reset`](crate::breaker::Breaker::reset) |
//! | `POST /breakers/{name}/{open,close,reset}[?for=10m]` | the same, the older form |
//! | `POST /actions/{open,close,reset}/{name}?scope=fleet&for=10m&by=alice` | (feature `redis`) a fleet override for every instance, expiring after `for` (the older form takes `scope=fleet` too) |
//! | `GET /fleet` | (feature `redis`) every live instance of the fleet and what it sees |
//! | `POST /shadow/{set,promote,drop}/{name}[?trip_p95=500ms&...&by=alice]` | shadow settings beside the live ones: set, promote, drop (also `POST /breakers/{name}/shadow[/promote,/drop]`; see below) |
//! | `POST /settings/breaker/{name}?failure_rate=80&timeout=2s[&for=10m][&by=alice]` | changes settings while running ([`change_settings`](crate::breaker::Breaker::change_settings)), answers the new figures; a bad one is a 400 naming the key, the value and the reason |
//! | `POST /settings/bulkhead/{name}?pool=40[&max_wait=20ms][&for=10m]` | the same for a bulkhead |
//! | `DELETE /settings/{breaker,bulkhead}/{name}` | ends the change: the start's overrides, else the code's settings, return |
//! | `POST /settings/{breaker,bulkhead}/{name}?...&scope=fleet&for=10m&by=alice` | (feature `redis`) the change on every instance, expiring after `for` |
//! | `DELETE /settings/{breaker,bulkhead}/{name}?scope=fleet[&by=alice]` | (feature `redis`) ends the fleet's change on every instance (here at once, elsewhere at the next read); answers `ended` |
//!
//! Shadow settings (issue 29): `POST /shadow/set/{name}?trip_p95=500ms` judges those settings
//! beside the live ones ([`Breaker::set_shadow`](crate::breaker::Breaker::set_shadow));
//! `/shadow/promote/{name}` ends the shadow and makes its settings the live ones (a live change);
//! `/shadow/drop/{name}` ends it. Each is logged at WARN with `by` and the peer address; a bad
//! setting is a 400 with the settings table's message. The settings travel in the query.
//! Promoting answers the candidate (`promoted`) and the settings now in force (`settings`);
//! a candidate that could not be put in force is a 409 and the shadow is kept.
//!
//! In `/actions/{verb}/{name}` the whole rest of the path is the name, so it is never ambiguous.
//! The older `/breakers/{name}/open` answers 409 when `{name}/open` is itself a breaker (a keyed
//! breaker whose key is `open`, which `GET` on that path shows). Every local action is logged at
//! WARN with the breaker, the action, `for`, and the peer address (serve with
//! `into_make_service_with_connect_info::<SocketAddr>()` to have it; else `unknown`).
//!
//! Keyed names work both percent-encoded (`redis%2F3`) and as is (`redis/3`). Every route but
//! the page, unknown ones included, needs `Authorization: Bearer <token>`: without it the answer
//! is a bare 401. An unknown breaker is 404, a wrong method 405. No handler reads a request body.
//! The router never binds a socket: the application serves it where it wants (loopback!).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let admin = fusebox::admin::router("s3cret-from-the-environment").expect("a token");
//! // let listener = tokio::net::TcpListener::bind("127.0.0.1:9091").await?;
//! // let app = admin.into_make_service_with_connect_info::<std::net::SocketAddr>();
//! // axum::serve(listener, app).await?;
//! # let _ = admin;
//! assert!(fusebox::admin::router("").is_err());
//! # }
//! ```

mod auth;
#[cfg(feature = "redis")]
mod fleet;
mod handlers;
mod page;
mod query;
mod settings;
mod shadow;

use std::fmt;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;

/// Why [`router`] refused to build.
///
/// ```
/// use fusebox::admin::{router, AdminError};
/// assert_eq!(router("").err(), Some(AdminError::EmptyToken));
/// assert_eq!(router("has space").err(), Some(AdminError::InvalidToken));
/// assert_eq!(router("s3cret").err(), Some(AdminError::ShortToken { len: 6 }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdminError {
    /// The token is empty: an empty bearer token would protect nothing.
    EmptyToken,
    /// The token has a character no client can send in an `Authorization` header
    /// (only visible ASCII, no spaces).
    InvalidToken,
    /// Shorter than [`MIN_TOKEN_LEN`] bytes: guessable. `openssl rand -hex 16` gives 32.
    ShortToken {
        /// The token's length in bytes.
        len: usize,
    },
}

/// The shortest admin token [`router`] accepts, in bytes.
pub const MIN_TOKEN_LEN: usize = 16;

impl fmt::Display for AdminError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdminError::EmptyToken => f.write_str("the admin token is empty"),
            AdminError::InvalidToken => {
                f.write_str("the admin token must be visible ASCII characters without spaces")
            }
            AdminError::ShortToken { len } => write!(
                f,
                "the admin token has {len} bytes, at least {MIN_TOKEN_LEN} are needed \
                 (e.g. `openssl rand -hex 16`)"
            ),
        }
    }
}

impl std::error::Error for AdminError {}

/// The admin router, protected by the bearer `token`.
///
/// Fails with a typed error for an empty token, one shorter than [`MIN_TOKEN_LEN`] bytes, or
/// one that cannot travel in a header.
///
/// ```
/// # fn token_from_env() -> String { "s3cret-of-sixteen-bytes".into() }
/// let admin: axum::Router = fusebox::admin::router(token_from_env()).unwrap();
/// // Mount it under a prefix of the debug server if you like:
/// let debug = axum::Router::new().nest("/fusebox", admin);
/// # let _ = debug;
/// ```
pub fn router(token: impl Into<String>) -> Result<Router, AdminError> {
    let token: String = token.into();
    if token.is_empty() {
        return Err(AdminError::EmptyToken);
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(AdminError::InvalidToken);
    }
    if token.len() < MIN_TOKEN_LEN {
        return Err(AdminError::ShortToken { len: token.len() });
    }
    let token: Arc<[u8]> = token.into_bytes().into();
    let routes = Router::new().route("/", get(page::index));
    #[cfg(feature = "redis")]
    let routes = routes.route("/fleet", get(fleet::view));
    Ok(routes
        .route("/breakers", get(handlers::list))
        .route("/metrics", get(handlers::prometheus))
        .route("/breakers/{*path}", get(handlers::show).post(handlers::act))
        .route("/actions/{*path}", post(handlers::act_on))
        .route("/shadow/{*path}", post(shadow::act))
        .route(
            "/settings/{*path}",
            post(settings::change).delete(settings::end),
        )
        .fallback(handlers::not_found)
        // Nothing reads a body; the limit makes sure nothing ever buffers a large one.
        .layer(DefaultBodyLimit::max(1024))
        .layer(axum::middleware::from_fn_with_state(token, page::gate)))
}
