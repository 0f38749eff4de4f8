//! fusebox: circuit breakers and bulkheads for async functions.
pub use fusebox_runtime::*;
