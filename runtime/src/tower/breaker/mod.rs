//! The breaker middleware: [`BreakerLayer`] makes [`BreakerService`]s, whose calls are
//! [`BreakerFuture`]s.

mod future;
mod layer;
mod service;

pub use future::BreakerFuture;
pub use layer::BreakerLayer;
pub use service::BreakerService;
