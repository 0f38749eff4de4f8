//! The dependency behind `#[retry]` (issue 30): a call that succeeds at once must cost at most
//! 10 ns more with a retry than without (benches/benches/retry.rs, the `attr_retry` case of
//! the callgrind driver).

use crate::{dependency, Boom};

/// `#[breaker]` alone, with a name of its own and the default settings: the baseline.
#[fusebox::breaker(name = "bench-retry-base")]
pub async fn attr_no_retry(x: u64) -> Result<u64, Boom> {
    dependency(x, false).await
}

/// The same breaker settings with `#[retry]` (its defaults: 3 attempts, a budget).
#[fusebox::retry]
#[fusebox::breaker(name = "bench-retry")]
pub async fn attr_retry(x: u64) -> Result<u64, Boom> {
    dependency(x, false).await
}

/// `#[retry]` with a deadline: the one setting that reads the clock before the first attempt.
#[fusebox::retry(total = "2s")]
#[fusebox::breaker(name = "bench-retry-total")]
pub async fn attr_retry_total(x: u64) -> Result<u64, Boom> {
    dependency(x, false).await
}
