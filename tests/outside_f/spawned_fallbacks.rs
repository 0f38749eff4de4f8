//! DESIGN's fallback row, met by the composed attributes of issues 16-22: an annotated fn is an
//! ordinary `Send` future whatever it returns, so it can be spawned.

use super::*;

fn static_answer(_: Error<DepError>) -> Result<&'static str, DepError> {
    Ok("from the fallback")
}

async fn static_answer_async(_: Error<DepError>) -> Result<&'static str, DepError> {
    Ok("from the fallback")
}

fn static_answer_for(_region: &u32, _: Error<DepError>) -> Result<&'static str, DepError> {
    Ok("from the fallback")
}

#[breaker(name = "of-static-sync", fallback = static_answer)]
async fn static_sync(down: bool) -> Result<&'static str, DepError> {
    if down {
        Err(DepError::Down)
    } else {
        Ok("live")
    }
}

#[breaker(name = "of-static-async", fallback = static_answer_async)]
async fn static_async() -> Result<&'static str, DepError> {
    Err(DepError::Down)
}

#[fusebox::retry(attempts = 2, backoff = "10ms")]
#[breaker(name = "of-static-args", fallback = static_answer_for, stale_for = "1m")]
#[bulkhead(name = "of-static-pool", pool = 2)]
async fn static_composed(region: u32) -> Result<&'static str, DepError> {
    let _ = region;
    Err(DepError::Down)
}

/// A fallback returning a borrowed `'static` value (`&'static str`) used to make the annotated
/// future fail `tokio::spawn`'s `Send` check ("`FallbackReturn` is not general enough").
#[tokio::test(start_paused = true)]
async fn an_annotated_fn_whose_fallback_returns_a_static_str_can_be_spawned() {
    assert_eq!(tokio::spawn(static_sync(false)).await.unwrap(), Ok("live"));
    assert_eq!(
        tokio::spawn(static_sync(true)).await.unwrap(),
        Ok("from the fallback")
    );
    assert_eq!(
        tokio::spawn(static_async()).await.unwrap(),
        Ok("from the fallback")
    );
    assert_eq!(
        tokio::spawn(static_composed(7)).await.unwrap(),
        Ok("from the fallback")
    );
}
