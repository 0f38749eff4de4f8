//! Feature `axum`: a rejection is an HTTP answer, `503 Service Unavailable` with `Retry-After`.
//!
//! The answer leaks nothing to the caller: the status, `Retry-After` in whole seconds and the
//! status's own reason phrase as the body. Breaker and bulkhead names (a tenant's key among them)
//! are internal; a service that wants them in the body opts in with [`Named`].

use std::fmt;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::Error;

use crate::error::Rejection;
use crate::state::State;

/// `503 Service Unavailable` for an open breaker (with `Retry-After` in whole seconds, rounded
/// up, when it knows when it retries) and a full bulkhead; `504 Gateway Timeout` for a call cut
/// short by its timeout. The body is the status's reason phrase alone: no breaker name, key or
/// duration reaches the caller ([`Named`] opts in to names).
///
/// ```
/// use std::time::Duration;
/// use axum::response::IntoResponse;
/// use fusebox::{Rejection, State};
///
/// let open = Rejection::Open {
///     name: "payments/eu".into(),
///     state: State::Open,
///     retry_in: Some(Duration::from_millis(1500)),
/// };
/// let res = open.into_response();
/// assert_eq!(res.status(), 503);
/// assert_eq!(res.headers()["retry-after"], "2");
/// ```
impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        let (status, retry_after) = parts(&self);
        answer(status, retry_after, body_of(status))
    }
}

/// A rejection answers as [`Rejection`] does; the call's own error answers as itself.
///
/// ```
/// use axum::http::StatusCode;
/// use axum::response::IntoResponse;
/// use fusebox::{Error, Rejection};
///
/// let full: Error<StatusCode> = Error::Rejected(Rejection::Full { name: "pool".into(), pool: 4 });
/// assert_eq!(full.into_response().status(), 503);
/// let own: Error<StatusCode> = Error::Failed(StatusCode::BAD_GATEWAY);
/// assert_eq!(own.into_response().status(), 502);
/// ```
impl<E: IntoResponse> IntoResponse for Error<E> {
    fn into_response(self) -> Response {
        match self {
            Error::Rejected(r) => r.into_response(),
            Error::Failed(e) => e.into_response(),
        }
    }
}

/// The opt-in switch for names in the body: `Named(rejection)` (or `Named(error)`) answers with
/// the same status and `Retry-After`, and a body that names the breaker or bulkhead and says
/// why, in whole seconds. For internal services, whose callers are the same team; a public
/// port should answer with the plain [`Rejection`].
///
/// ```
/// use std::time::Duration;
/// use axum::response::IntoResponse;
/// use fusebox::{Rejection, State};
/// use fusebox::response::Named;
///
/// let open = Rejection::Open {
///     name: "payments".into(),
///     state: State::Open,
///     retry_in: Some(Duration::from_millis(29_999)),
/// };
/// let res = Named(open).into_response();
/// assert_eq!(res.status(), 503);
/// assert_eq!(res.headers()["retry-after"], "30");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named<T>(pub T);

impl IntoResponse for Named<Rejection> {
    fn into_response(self) -> Response {
        let (status, retry_after) = parts(&self.0);
        answer(status, retry_after, Detail(&self.0).to_string())
    }
}

impl<E: IntoResponse> IntoResponse for Named<Error<E>> {
    fn into_response(self) -> Response {
        match self.0 {
            Error::Rejected(r) => Named(r).into_response(),
            Error::Failed(e) => e.into_response(),
        }
    }
}

/// The status and the `Retry-After` seconds of a rejection.
fn parts(r: &Rejection) -> (StatusCode, Option<u64>) {
    let status = match r {
        Rejection::TimedOut { .. } => StatusCode::GATEWAY_TIMEOUT,
        _ => StatusCode::SERVICE_UNAVAILABLE,
    };
    let retry_after = match r {
        Rejection::Open {
            retry_in: Some(d), ..
        } => Some(whole_secs(d)),
        _ => None,
    };
    (status, retry_after)
}

/// Rounded up: a client that waits this long finds the breaker ready to try again.
fn whole_secs(d: &std::time::Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

fn body_of(status: StatusCode) -> String {
    format!("{}\n", status.canonical_reason().unwrap_or("Unavailable"))
}

fn answer(status: StatusCode, retry_after: Option<u64>, body: String) -> Response {
    let mut res = (status, body).into_response();
    if let Some(secs) = retry_after {
        res.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    res
}

/// The body of [`Named`]: the name, the state and the wait in whole seconds.
struct Detail<'a>(&'a Rejection);

impl fmt::Display for Detail<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Rejection::Open {
                name,
                state: State::Closed,
                ..
            } => write!(f, "circuit breaker `{name}` is ramping traffic back in")?,
            Rejection::Open {
                name,
                state,
                retry_in,
            } => {
                write!(f, "circuit breaker `{name}` is {state}")?;
                if let Some(d) = retry_in {
                    write!(f, "; retrying in {} s", whole_secs(d))?;
                }
            }
            Rejection::Full { name, .. } => write!(f, "bulkhead `{name}` is full")?,
            Rejection::TimedOut { name, after } => write!(
                f,
                "call through `{name}` timed out after {} ms",
                after.as_millis()
            )?,
        }
        writeln!(f)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn open(retry_in: Option<Duration>) -> Rejection {
        Rejection::Open {
            name: "payments/eu".into(),
            state: State::Open,
            retry_in,
        }
    }

    async fn body(res: Response) -> String {
        let bytes = axum::body::to_bytes(res.into_body(), 1 << 16)
            .await
            .unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[test]
    fn retry_after_rounds_up_and_is_absent_when_unknown() {
        let header = |d| open(d).into_response().headers()["retry-after"].clone();
        assert_eq!(header(Some(Duration::from_secs(3))), "3");
        assert_eq!(header(Some(Duration::from_millis(1))), "1");
        assert_eq!(header(Some(Duration::from_nanos(29_999_871_234))), "30");
        assert!(open(None)
            .into_response()
            .headers()
            .get("retry-after")
            .is_none());
    }

    #[test]
    fn a_timeout_is_a_gateway_timeout_without_retry_after() {
        let res = Rejection::TimedOut {
            name: "x".into(),
            after: Duration::from_secs(1),
        }
        .into_response();
        assert_eq!(res.status(), StatusCode::GATEWAY_TIMEOUT);
        assert!(res.headers().get("retry-after").is_none());
    }

    #[tokio::test]
    async fn the_body_names_nothing() {
        let full = Rejection::Full {
            name: "tenant-42".into(),
            pool: 4,
        };
        let timed_out = Rejection::TimedOut {
            name: "payments/eu".into(),
            after: Duration::from_millis(800),
        };
        let ramp = Rejection::Open {
            name: "payments/eu".into(),
            state: State::Closed,
            retry_in: None,
        };
        for (r, want) in [
            (
                open(Some(Duration::from_nanos(29_999_871_234))),
                "Service Unavailable\n",
            ),
            (full, "Service Unavailable\n"),
            (ramp, "Service Unavailable\n"),
            (timed_out, "Gateway Timeout\n"),
        ] {
            let through_error =
                body(Error::<StatusCode>::Rejected(r.clone()).into_response()).await;
            let text = body(r.into_response()).await;
            assert_eq!(text, want);
            assert_eq!(through_error, want);
        }
    }

    #[tokio::test]
    async fn named_bodies_name_the_breaker_in_whole_seconds() {
        let res = Named(open(Some(Duration::from_nanos(29_999_871_234)))).into_response();
        assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(res.headers()["retry-after"], "30");
        assert_eq!(
            body(res).await,
            "circuit breaker `payments/eu` is open; retrying in 30 s\n"
        );
        let full = Error::<StatusCode>::Rejected(Rejection::Full {
            name: "reports".into(),
            pool: 4,
        });
        assert_eq!(
            body(Named(full).into_response()).await,
            "bulkhead `reports` is full\n"
        );
        let own = Named(Error::Failed(StatusCode::BAD_GATEWAY)).into_response();
        assert_eq!(own.status(), StatusCode::BAD_GATEWAY);
    }
}
