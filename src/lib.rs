//! fusebox: circuit breakers and bulkheads for async functions.
pub use fusebox_runtime::*;

/// The virtual-time outage simulator and the incident replays.
#[cfg(feature = "sim")]
pub use fusebox_runtime::sim;
