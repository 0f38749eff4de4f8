//! `RetryLayer`: a [`Retry`](crate::retry::Retry) around a breaker's service, on the same
//! budgets as every other retry of its name.

mod layer;
mod service;
pub(crate) mod verdict;

pub use layer::{Hints, RetryHints, RetryLayer};
pub use service::RetryService;
