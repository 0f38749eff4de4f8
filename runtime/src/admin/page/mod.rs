//! The operator's page, `GET /`: one HTML document with its CSS and JS compiled into the crate.
//!
//! The document holds no data, so it is the one route served without the token; its script
//! asks for the token (typed in, or once from the URL fragment `#token=...`), keeps it in
//! `sessionStorage` and sends it as `Authorization: Bearer` on every data and action request.
//! History for the sparklines is kept by the page, so the runtime stores nothing for it.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The whole page, assembled at compile time: no build step, no CDN, works offline.
const PAGE: &str = concat!(
    include_str!("head.html"),
    "<style>\n",
    include_str!("page.css"),
    "</style>\n</head>\n",
    include_str!("body.html"),
    // One strict-mode block: its functions and bindings stay out of the global object.
    "<script>\n'use strict';\n{\n",
    include_str!("render.js"),
    include_str!("settings.js"),
    include_str!("retry.js"),
    include_str!("shadow.js"),
    include_str!("page.js"),
    "}\n</script>\n</body>\n</html>\n",
);

/// Scripts and styles only from the page itself, requests only to its own origin (a script
/// injected by some bug could not send the token elsewhere), never framed (no clickjacking).
const CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
     img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// `GET /`: the page.
pub(super) async fn index() -> Response {
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(CSP),
            ),
            (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
            (
                header::REFERRER_POLICY,
                HeaderValue::from_static("no-referrer"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        PAGE,
    )
        .into_response()
}

/// Lets `GET /` (and `HEAD /`) through without a token, since the page holds no data; every
/// other request, unknown routes included, goes through the bearer check.
pub(super) async fn gate(token: State<Arc<[u8]>>, req: Request, next: Next) -> Response {
    let page = matches!(*req.method(), Method::GET | Method::HEAD) && req.uri().path() == "/";
    if page {
        return next.run(req).await;
    }
    super::auth::require(token, req, next).await
}

#[cfg(test)]
mod tests {
    use super::PAGE;

    #[test]
    fn the_page_is_self_contained_and_small() {
        assert!(PAGE.starts_with("<!doctype html>"));
        assert!(PAGE.len() < 64 * 1024, "{} bytes", PAGE.len());
        // Nothing is loaded from elsewhere: no external script, style sheet or font.
        for needle in ["src=\"http", "href=\"http", "@import", "url(http", "//cdn"] {
            assert!(!PAGE.contains(needle), "{needle}");
        }
        // The token never travels in a cookie or a query string.
        assert!(!PAGE.contains("document.cookie"));
        assert!(!PAGE.contains("?token"));
    }

    #[test]
    fn every_id_on_the_page_is_unique() {
        // Panels are written in separate files; two with the same id would make one of them
        // fill the other's table (`getElementById` returns the first).
        let mut seen = std::collections::HashSet::new();
        for part in PAGE.split(" id=\"").skip(1) {
            let id = &part[..part.find('"').unwrap_or(0)];
            assert!(seen.insert(id), "id `{id}` appears twice on the page");
        }
        assert!(seen.len() > 20, "the page's ids were found: {}", seen.len());
    }
}
