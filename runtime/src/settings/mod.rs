//! Breaker settings: the validated [`BreakerConfig`], the [`BreakerBuilder`] that checks every
//! value, and the parsing of settings from text (`from_settings`, `from_env`).
//!
//! Nothing here knows windows, breakers or the registry: those read a `BreakerConfig`.

mod builder;
mod checks;
mod config;
mod text;

pub(crate) use builder::defaults;
pub use builder::BreakerBuilder;
pub(crate) use checks::check_name;
pub use config::{BreakerConfig, HalfOpenPolicy, SlowRule, WindowKind};
