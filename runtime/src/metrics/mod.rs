//! What an operator or a test looks at: a snapshot of every breaker and bulkhead, and the
//! ways out of the process (Prometheus text, JSON, the `metrics` crate facade).

mod breaker;
pub mod export;
mod limit;
mod retry;
mod shadow;
mod snapshot;

pub use limit::{AdaptiveMetrics, LimitChange};
pub use retry::RetryMetrics;
pub use shadow::ShadowMetrics;

pub use snapshot::{
    metrics, stuck_breakers, BreakerMetrics, BulkheadMetrics, Metrics, RejectedByReason,
};
