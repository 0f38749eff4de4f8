//! Bearer-token check, in constant time over the expected token.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Lets the request through only with `Authorization: Bearer <token>`; otherwise a bare 401.
pub(super) async fn require(State(token): State<Arc<[u8]>>, req: Request, next: Next) -> Response {
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| bearer(v.as_bytes()));
    match given {
        Some(given) if ct_eq(&token, given) => next.run(req).await,
        _ => unauthorized(),
    }
}

fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"))],
    )
        .into_response()
}

/// The credentials of a `Bearer` authorization (the scheme is case-insensitive, RFC 7235).
fn bearer(value: &[u8]) -> Option<&[u8]> {
    const SCHEME: &[u8] = b"bearer ";
    let (scheme, rest) = value.split_at_checked(SCHEME.len())?;
    scheme.eq_ignore_ascii_case(SCHEME).then_some(rest)
}

/// Compares without an early exit, so the time taken tells nothing about how much matched.
fn ct_eq(expected: &[u8], given: &[u8]) -> bool {
    let mut diff = expected.len() ^ given.len();
    for (i, &e) in expected.iter().enumerate() {
        let g = given.get(i).copied().unwrap_or(!e);
        diff |= usize::from(e ^ g);
    }
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_only_when_every_byte_and_the_length_match() {
        assert!(ct_eq(b"s3cret", b"s3cret"));
        assert!(!ct_eq(b"s3cret", b"s3cres"));
        assert!(!ct_eq(b"s3cret", b"s3cre"));
        assert!(!ct_eq(b"s3cret", b"s3cret!"));
        assert!(!ct_eq(b"s3cret", b""));
    }

    #[test]
    fn the_scheme_is_case_insensitive_and_required() {
        assert_eq!(bearer(b"Bearer abc"), Some(&b"abc"[..]));
        assert_eq!(bearer(b"bEaReR abc"), Some(&b"abc"[..]));
        assert_eq!(bearer(b"Basic abc"), None);
        assert_eq!(bearer(b"Bear"), None);
    }
}
