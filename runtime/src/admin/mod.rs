//! Admin HTTP endpoints (feature `admin`): an axum [`Router`] a service mounts on its debug port.
//!
//! | route | answer |
//! |---|---|
//! | `GET /` | the operator's page (HTML; the one route without the token, as it holds no data) |
//! | `GET /breakers` | the JSON snapshot: `{"breakers": [...], "bulkheads": [...]}` |
//! | `GET /metrics` | Prometheus text |
//! | `GET /breakers/{name}` | one breaker's JSON figures |
//! | `POST /breakers/{name}/open` | [`force_open`](crate::breaker::Breaker::force_open), answers the new figures |
//! | `POST /breakers/{name}/close` | [`force_close`](crate::breaker::Breaker::force_close) |
//! | `POST /breakers/{name}/reset` | [`reset`](crate::breaker::Breaker::reset) |
//!
//! Keyed names work both percent-encoded (`redis%2F3`) and as is (`redis/3`). Every route but
//! the page, unknown ones included, needs `Authorization: Bearer <token>`: without it the answer
//! is a bare 401. An unknown breaker is 404, a wrong method 405. No handler reads a request body.
//! The router never binds a socket: the application serves it where it wants (loopback!).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let admin = fusebox_runtime::admin::router("s3cret-from-the-environment").expect("a token");
//! // let listener = tokio::net::TcpListener::bind("127.0.0.1:9091").await?;
//! // axum::serve(listener, admin).await?;
//! # let _ = admin;
//! assert!(fusebox_runtime::admin::router("").is_err());
//! # }
//! ```

mod auth;
mod handlers;
mod page;

use std::fmt;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use axum::Router;

/// Why [`router`] refused to build.
///
/// ```
/// use fusebox_runtime::admin::{router, AdminError};
/// assert_eq!(router("").err(), Some(AdminError::EmptyToken));
/// assert_eq!(router("has space").err(), Some(AdminError::InvalidToken));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdminError {
    /// The token is empty: an empty bearer token would protect nothing.
    EmptyToken,
    /// The token has a character no client can send in an `Authorization` header
    /// (only visible ASCII, no spaces).
    InvalidToken,
}

impl fmt::Display for AdminError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AdminError::EmptyToken => "the admin token is empty",
            AdminError::InvalidToken => {
                "the admin token must be visible ASCII characters without spaces"
            }
        })
    }
}

impl std::error::Error for AdminError {}

/// The admin router, protected by the bearer `token`.
///
/// Fails with a typed error for an empty token or one that cannot travel in a header.
///
/// ```
/// # fn token_from_env() -> String { "s3cret".into() }
/// let admin: axum::Router = fusebox_runtime::admin::router(token_from_env()).unwrap();
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
    let token: Arc<[u8]> = token.into_bytes().into();
    Ok(Router::new()
        .route("/", get(page::index))
        .route("/breakers", get(handlers::list))
        .route("/metrics", get(handlers::prometheus))
        .route("/breakers/{*path}", get(handlers::show).post(handlers::act))
        .fallback(handlers::not_found)
        // Nothing reads a body; the limit makes sure nothing ever buffers a large one.
        .layer(DefaultBodyLimit::max(1024))
        .layer(axum::middleware::from_fn_with_state(token, page::gate)))
}
