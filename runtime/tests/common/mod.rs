//! Helpers shared by the runtime's integration tests.
#![allow(dead_code)]

use std::time::Duration;

use fusebox_runtime::{Breaker, Error};
use tokio::time::sleep;

pub const MS: Duration = Duration::from_millis(1);

pub fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// One call that succeeds after `latency`.
pub async fn ok(b: &Breaker, latency: Duration) -> Result<(), Error<&'static str>> {
    b.call(async move {
        sleep(latency).await;
        Ok(())
    })
    .await
}

/// One call that fails after `latency`.
pub async fn fail(b: &Breaker, latency: Duration) -> Result<(), Error<&'static str>> {
    b.call(async move {
        sleep(latency).await;
        Err("boom")
    })
    .await
}

pub fn is_rejected<T>(r: &Result<T, Error<&'static str>>) -> bool {
    matches!(r, Err(Error::Rejected(_)))
}
pub mod recovery;
