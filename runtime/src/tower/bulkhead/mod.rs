//! The bulkhead middleware: [`BulkheadLayer`] makes [`BulkheadService`]s, whose calls are
//! [`BulkheadFuture`]s.

mod future;
mod layer;
mod service;

pub use future::BulkheadFuture;
pub use layer::BulkheadLayer;
pub use service::BulkheadService;
