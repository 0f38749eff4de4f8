//! Retries that never make an outage worse: on a budget, never into an open breaker or a full
//! bulkhead, never past the caller's deadline, and a timeout only when the call is idempotent.
//!
//! A [`Retry`] wraps attempts that each go through the breaker (and bulkhead) on their own, so
//! each attempt is judged as a call of its own: a retry storm is seen by the breaker as what it
//! is, more failing calls.
//!
//! | an attempt ended with | retried? |
//! |---|---|
//! | `Ok` | no: the answer is returned |
//! | `Error::Failed(e)` with `retry_on(&e)` (every counted failure by default) | yes, within attempts, budget and deadline |
//! | `Error::Failed(e)` that `retry_on` refuses | no |
//! | `Rejection::Open` (open, forced open, half-open not admitted, ramp) | never: returned at once, so the fallback answers now; waiting out `retry_in` would hold the caller for seconds |
//! | `Rejection::Full` (bulkhead) | never: a full pool is the dependency being slow, more load is what it cannot take |
//! | a failure while the attempts' breaker surely refuses through the backoff (open, forced or held open past it, no probe due) | no retry granted and no wait: the next attempt, made at once, is refused and its refusal returned |
//! | `Rejection::TimedOut` | only with `idempotent`: a timeout leaves the outcome unknown (a payment may have gone through) |
//!
//! Between attempts it waits a [`Backoff`] (exponential, full jitter, capped), or longer if the
//! dependency said so (`retry_after`, e.g. HTTP `Retry-After` or gRPC's pushback). The
//! [`RetryBudget`] of the name (shared by every `Retry` of that name) bounds retries to a share of
//! the calls plus a floor per second.
//!
//! ```
//! use std::time::Duration;
//! use fusebox::retry::Retry;
//! use fusebox::{Breaker, Error};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
//! let breaker = Breaker::builder("retry-doc-prices").build().unwrap();
//! let retry = Retry::builder("retry-doc-prices").attempts(3).build().unwrap();
//! let mut tries = 0;
//! let r: Result<u32, Error<&str>> = retry
//!     .run(|| {
//!         tries += 1;
//!         let fails = tries < 3;
//!         breaker.call(async move { if fails { Err("reset") } else { Ok(42) } })
//!     })
//!     .await;
//! assert_eq!(r, Ok(42));
//! assert_eq!(tries, 3);
//! # }
//! ```

mod backoff;
mod budget;
pub(crate) mod names;
mod policy;
mod run;

pub use backoff::Backoff;
pub use budget::{BudgetConfig, RetryBudget};
pub use names::{budget, budgets};
pub use policy::{Retry, RetryBuilder};
