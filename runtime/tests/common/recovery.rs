//! Helpers of the recovery tests (`recovery_probes.rs`, `recovery_ramp.rs`): a breaker that
//! trips on four calls, and a dependency that counts what reaches it.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use fusebox_runtime::{Breaker, BreakerBuilder, Error, Rejection, State};
use tokio::time::sleep;

use super::{fail, secs, MS};

/// Four calls in a row, half failing opens it; open 30 s.
pub fn breaker(name: &str) -> BreakerBuilder {
    Breaker::builder(name)
        .window_calls(4)
        .min_calls(4)
        .failure_rate(50)
        .open_for(secs(30))
}

/// The `retry_in` of a call refused while open.
pub fn retry_in(r: Result<(), Error<&'static str>>) -> Option<Duration> {
    match r {
        Err(Error::Rejected(Rejection::Open { retry_in, .. })) => retry_in,
        other => panic!("refused while open, got {other:?}"),
    }
}

pub async fn trip(b: &Breaker) {
    for _ in 0..4 {
        let _ = fail(b, MS).await;
    }
    assert_eq!(b.state(), State::Open);
}

/// A dependency whose answers are counted: `down` decides whether it fails.
#[derive(Clone, Default)]
pub struct Dep {
    reached: Arc<AtomicU32>,
}

impl Dep {
    pub async fn call(
        &self,
        b: &Breaker,
        fails: bool,
        latency: Duration,
    ) -> Result<(), Error<&'static str>> {
        let reached = self.reached.clone();
        b.call(async move {
            reached.fetch_add(1, Relaxed);
            sleep(latency).await;
            if fails {
                Err("down")
            } else {
                Ok(())
            }
        })
        .await
    }
    pub fn reached(&self) -> u32 {
        self.reached.load(Relaxed)
    }
}

/// `n` calls that answer at once; how many went through.
pub async fn admitted_of(b: &Breaker, n: u32) -> u32 {
    let mut through = 0;
    for _ in 0..n {
        match b.call(async { Ok::<(), &str>(()) }).await {
            Ok(()) => through += 1,
            Err(Error::Rejected(Rejection::Open { state, .. })) => {
                assert_eq!(state, State::Closed, "refused by the ramp")
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    through
}
