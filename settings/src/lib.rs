//! The settings of fusebox's breakers, bulkheads and retries, in one table: keys, units, ranges,
//! defaults, cross-key rules, parsing from text, and every error message.
//!
//! The attribute macros call it at compile time and the runtime's builder and text parsing
//! call it at run time, so the three entry points give one verdict in the same words.
//! Values are collected as given into a [`RawSettings`] (typed setters or
//! [`set_text`](RawSettings::set_text)), and [`check`](RawSettings::check) turns them into
//! [`Settings`] or the first [`ConfigError`].
//!
//! ```
//! use std::time::Duration;
//! use fusebox_settings::{ConfigError, RawSettings, WindowKind};
//!
//! let mut raw = RawSettings::new();
//! raw.set_text("window_calls", "20").unwrap();
//! raw.set_text("timeout", "500ns").unwrap();
//! let settings = raw.check().unwrap();
//! assert_eq!(settings.window(), WindowKind::Calls(20));
//! assert_eq!(settings.timeout(), Some(Duration::from_nanos(500)));
//!
//! // The typed path refuses what text refuses, with the same error.
//! let typed = RawSettings::new().window_calls(2_000_000).check().unwrap_err();
//! let text = RawSettings::new().set_text("window_calls", "2000000").unwrap_err();
//! assert_eq!(typed, text);
//! assert!(matches!(typed, ConfigError::OutOfRange { field: "window_calls", .. }));
//! ```
#![forbid(unsafe_code)]
// docs.rs (`--cfg docsrs`, nightly) marks every feature-gated item with the feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod breaker;
mod bulkhead;
mod const_text;
pub mod defaults;
mod duration;
mod error;
#[cfg(feature = "serde")]
mod json;
mod keys;
mod name;
mod overrides;
mod parts;
mod policies;
mod raw;
mod retry;
mod suggest;
mod written;

pub use breaker::Settings;
pub use bulkhead::{BulkheadSettings, PoolLimit, RawBulkheadSettings};
pub use duration::{nanos, parse_duration};
pub use error::ConfigError;
pub use keys::{Key, Kind, BREAKER_KEYS, BULKHEAD_KEYS, KEYS, RETRY_KEYS};
pub use name::check_name;
pub use overrides::{duration_text, Source};
#[doc(hidden)]
pub use parts::{BulkheadParts, SettingsParts};
pub use policies::{HalfOpenPolicy, SlowRule, WindowKind};
pub use raw::RawSettings;
pub use retry::{RawRetrySettings, RetrySettings};
pub use suggest::suggest;
