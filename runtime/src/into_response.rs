//! Feature `axum`: a rejection is an HTTP answer, `503 Service Unavailable` with `Retry-After`.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::Error;

use crate::error::Rejection;

/// `503 Service Unavailable` for an open breaker (with `Retry-After` in whole seconds, rounded
/// up, when it knows when it retries) and a full bulkhead; `504 Gateway Timeout` for a call cut
/// short by its timeout. The body is the rejection's text.
///
/// ```
/// use std::time::Duration;
/// use axum::response::IntoResponse;
/// use fusebox_runtime::{Rejection, State};
///
/// let open = Rejection::Open {
///     name: "payments".into(),
///     state: State::Open,
///     retry_in: Some(Duration::from_millis(1500)),
/// };
/// let res = open.into_response();
/// assert_eq!(res.status(), 503);
/// assert_eq!(res.headers()["retry-after"], "2");
/// ```
impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        let status = match self {
            Rejection::TimedOut { .. } => StatusCode::GATEWAY_TIMEOUT,
            _ => StatusCode::SERVICE_UNAVAILABLE,
        };
        let retry_after = match &self {
            Rejection::Open {
                retry_in: Some(d), ..
            } => Some(d.as_secs() + u64::from(d.subsec_nanos() > 0)),
            _ => None,
        };
        let mut res = (status, self.to_string()).into_response();
        if let Some(secs) = retry_after {
            res.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        res
    }
}

/// A rejection answers as [`Rejection`] does; the call's own error answers as itself.
///
/// ```
/// use axum::http::StatusCode;
/// use axum::response::IntoResponse;
/// use fusebox_runtime::{Error, Rejection};
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::state::State;

    fn open(retry_in: Option<Duration>) -> Response {
        Rejection::Open {
            name: "x".into(),
            state: State::Open,
            retry_in,
        }
        .into_response()
    }

    #[test]
    fn retry_after_rounds_up_and_is_absent_when_unknown() {
        assert_eq!(
            open(Some(Duration::from_secs(3))).headers()["retry-after"],
            "3"
        );
        assert_eq!(
            open(Some(Duration::from_millis(1))).headers()["retry-after"],
            "1"
        );
        assert!(open(None).headers().get("retry-after").is_none());
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
}
