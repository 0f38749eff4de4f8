//! Breaker settings: the validated [`BreakerConfig`] (a name and `fusebox_settings::Settings`),
//! the [`BreakerBuilder`] whose one check is `fusebox_settings`' own, and the parsing of
//! settings from text (`from_settings`, `from_env`).
//!
//! Every key, range, default and message lives in the `fusebox-settings` crate, which the
//! macros also call at compile time; this layer only adds names. Nothing here knows windows,
//! breakers or the registry: those read a `BreakerConfig`.

mod builder;
pub(crate) mod config;
pub(crate) mod in_force;
pub(crate) mod overrides;
mod overrides_env;
#[cfg(feature = "serde")]
mod overrides_file;
pub(crate) mod overrides_report;
pub(crate) mod text;

pub use builder::BreakerBuilder;
pub use config::BreakerConfig;
pub use fusebox_settings::Source;
pub use fusebox_settings::{HalfOpenPolicy, SlowRule, WindowKind};
pub use in_force::SettingInForce;
pub use overrides::{Applied, AppliedTo, GuardKind, OverrideError, Overrides, Undeclared};
