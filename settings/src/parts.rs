//! Checked settings rebuilt by the code `fusebox-macros` generates, field by field by name.
//!
//! The macro checks the attribute's settings at compile time and writes the result as a
//! `const`: a struct literal of [`SettingsParts`] (or [`BulkheadParts`]), so each value is
//! placed by its name and type, and a swapped or missing field does not compile. Not a public
//! API: the parts are not checked again.

use std::time::Duration;

use crate::breaker::Settings;
use crate::bulkhead::{BulkheadSettings, PoolLimit};
use crate::policies::{HalfOpenPolicy, SlowRule, WindowKind};
use crate::written::Written;

/// Every field of a [`Settings`], as [`Settings::__parts`] reads it and generated code writes
/// it back. Not a public API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SettingsParts {
    pub failure_rate: u8,
    pub window: WindowKind,
    pub min_calls: u32,
    pub slow: Option<SlowRule>,
    pub timeout: Option<Duration>,
    /// As given, without the fall-back to `timeout`.
    pub half_open_timeout: Option<Duration>,
    /// As given, without the fall-back to the slow rule's bound.
    pub half_open_slow: Option<Duration>,
    pub open_for: Duration,
    pub backoff: f64,
    pub open_for_max: Duration,
    pub half_open: HalfOpenPolicy,
    pub alert_after: Duration,
    pub max_keys: u32,
    pub probe_every: Option<Duration>,
    pub ramp: Option<Duration>,
}

/// Every field of a [`BulkheadSettings`]. Not a public API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BulkheadParts {
    pub pool: usize,
    pub max_wait: Duration,
    pub limit: PoolLimit,
}

/// Nanoseconds of an optional duration, 0 for `None`, as [`Settings`] stores them (checked
/// settings never hold a zero one; saturating like [`nanos`](crate::nanos)).
const fn nanos_or_zero(d: Option<Duration>) -> u64 {
    match d {
        Some(d) if d.as_nanos() > u64::MAX as u128 => u64::MAX,
        Some(d) => d.as_nanos() as u64,
        None => 0,
    }
}

impl Settings {
    /// Settings that [`RawSettings::check`](crate::RawSettings::check) already accepted,
    /// rebuilt from their parts by code that `fusebox-macros` generates. Not a public API.
    #[doc(hidden)]
    pub const fn __validated(parts: SettingsParts) -> Settings {
        Settings {
            failure_rate: parts.failure_rate,
            window: parts.window,
            min_calls: parts.min_calls,
            slow: parts.slow,
            timeout: parts.timeout,
            half_open_timeout: parts.half_open_timeout,
            half_open_slow: nanos_or_zero(parts.half_open_slow),
            open_for: parts.open_for,
            backoff: parts.backoff,
            open_for_max: parts.open_for_max,
            half_open: parts.half_open,
            alert_after: parts.alert_after,
            max_keys: parts.max_keys,
            probe_every: nanos_or_zero(parts.probe_every),
            ramp: nanos_or_zero(parts.ramp),
            // What was derived from `timeout` rides on `__with_derived`, and the keys written on
            // `__with_written`, each emitted only when there is some.
            derived: 0,
            written: Written(0),
        }
    }

    /// The parts [`__validated`](Self::__validated) takes, for the macro to write out.
    /// Not a public API.
    #[doc(hidden)]
    pub fn __parts(&self) -> SettingsParts {
        SettingsParts {
            failure_rate: self.failure_rate(),
            window: self.window(),
            min_calls: self.min_calls(),
            slow: self.slow(),
            timeout: self.timeout(),
            half_open_timeout: self.half_open_timeout_given(),
            half_open_slow: self.half_open_slow_given(),
            open_for: self.open_for(),
            backoff: self.backoff(),
            open_for_max: self.open_for_max(),
            half_open: self.half_open(),
            alert_after: self.alert_after(),
            max_keys: self.max_keys(),
            probe_every: self.probe_every(),
            ramp: self.ramp(),
        }
    }
}

impl BulkheadSettings {
    /// Settings that [`RawBulkheadSettings::check`](crate::RawBulkheadSettings::check) already
    /// accepted, rebuilt by generated code. Not a public API.
    #[doc(hidden)]
    pub const fn __validated(parts: BulkheadParts) -> BulkheadSettings {
        BulkheadSettings {
            pool: parts.pool,
            max_wait: parts.max_wait,
            limit: parts.limit,
        }
    }

    /// The parts [`__validated`](Self::__validated) takes. Not a public API.
    #[doc(hidden)]
    pub fn __parts(&self) -> BulkheadParts {
        BulkheadParts {
            pool: self.pool(),
            max_wait: self.max_wait(),
            limit: self.limit(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RawSettings;

    #[test]
    fn parts_rebuild_the_same_settings() {
        let mut raw = RawSettings::new();
        for (k, v) in [
            ("trip_p95", "500ms"),
            ("half_open_slow", "300ms"),
            ("probe_every", "5s"),
            ("ramp", "1m"),
            ("timeout", "800ms"),
        ] {
            raw.set_text(k, v).unwrap();
        }
        let s = raw.check().unwrap();
        assert_eq!(Settings::__validated(s.__parts()), s);
        let d = Settings::default();
        assert_eq!(Settings::__validated(d.__parts()), d);
    }
}
