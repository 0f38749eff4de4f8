//! Issue 27: a refusal as an HTTP response leaks nothing.

use super::*;

async fn body(res: axum::response::Response) -> String {
    let bytes = axum::body::to_bytes(res.into_body(), 1 << 16)
        .await
        .unwrap();
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// A keyed breaker's refusal as an HTTP answer: 503, `Retry-After` in whole seconds rounded
/// up, and a body that names neither the breaker nor the tenant's key nor a duration; with
/// `response::Named` (the opt-in) the name is there, in whole seconds too.
#[tokio::test(start_paused = true)]
async fn a_keyed_refusal_answers_503_in_whole_seconds_and_names_nothing() {
    use axum::response::IntoResponse;
    let template = Breaker::builder("ol-public")
        .window_calls(2)
        .min_calls(2)
        .open_for(ms(29_500))
        .config()
        .unwrap();
    let b = registry().keyed(&template, &"tenant-secret");
    for _ in 0..2 {
        let _ = b.call(async { Err::<(), _>(ApiError::Down) }).await;
    }
    advance(ms(200)).await;
    let Err(err) = b.call(async { Ok::<(), ApiError>(()) }).await else {
        panic!("refused while open");
    };
    let Error::Rejected(r) = err else {
        panic!("refused, not failed: {err:?}")
    };
    let res = r.clone().into_response();
    assert_eq!(res.status(), 503);
    assert_eq!(res.headers()["retry-after"], "30", "29.3 s rounds up");
    let text = body(res).await;
    assert!(
        !text.contains("tenant-secret") && !text.contains("ol-public") && !text.contains('.'),
        "{text}"
    );
    let named = body(fusebox::response::Named(r).into_response()).await;
    assert!(named.contains("ol-public/tenant-secret"), "{named}");
    assert!(named.contains("30 s"), "{named}");
}
