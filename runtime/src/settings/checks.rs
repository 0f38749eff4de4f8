//! The checks every builder shares (breakers and bulkheads alike), each a typed error.

use std::time::Duration;

use crate::error::ConfigError;

pub(crate) fn check_name(name: &str) -> Result<(), ConfigError> {
    if name.is_empty() {
        return Err(ConfigError::BadName {
            name: name.into(),
            reason: "a name cannot be empty",
        });
    }
    if name.chars().any(char::is_control) {
        return Err(ConfigError::BadName {
            name: name.into(),
            reason: "a name cannot contain control characters",
        });
    }
    Ok(())
}

pub(crate) fn conflict(first: &'static str, second: &'static str) -> ConfigError {
    ConfigError::Conflict { first, second }
}

pub(crate) fn pct(field: &'static str, v: u8) -> Result<(), ConfigError> {
    if (1..=100).contains(&v) {
        Ok(())
    } else {
        Err(ConfigError::OutOfRange {
            field,
            value: v.to_string(),
            expected: "a percentage from 1 to 100",
        })
    }
}

pub(crate) fn at_least_one(field: &'static str, v: u32) -> Result<(), ConfigError> {
    if v >= 1 {
        Ok(())
    } else {
        Err(ConfigError::OutOfRange {
            field,
            value: v.to_string(),
            expected: "at least 1",
        })
    }
}

pub(crate) fn positive(field: &'static str, d: Duration) -> Result<(), ConfigError> {
    if d.is_zero() {
        Err(ConfigError::ZeroDuration { field })
    } else {
        Ok(())
    }
}

/// The longest time window: each tenth of the window counts its calls
/// in a `u32`, which a six-minute slot still holds at ten million calls a second.
pub(crate) const MAX_WINDOW: Duration = Duration::from_secs(3600);

/// The largest `min_calls` and `half_open_calls`, like `window_calls`: counted in `u32`s.
pub(crate) const MAX_COUNT: u32 = 1_000_000;

/// A window length no `u32` counter of its slots can overflow.
pub(crate) fn window_len(field: &'static str, d: Duration) -> Result<(), ConfigError> {
    positive(field, d)?;
    if d > MAX_WINDOW {
        return Err(ConfigError::OutOfRange {
            field,
            value: format!("{d:?}"),
            expected: "at most 1h (its counters are 32-bit)",
        });
    }
    Ok(())
}

/// A count from 1 to [`MAX_COUNT`].
pub(crate) fn bounded_count(field: &'static str, v: u32) -> Result<(), ConfigError> {
    at_least_one(field, v)?;
    if v > MAX_COUNT {
        return Err(ConfigError::OutOfRange {
            field,
            value: v.to_string(),
            expected: "at most 1000000 calls",
        });
    }
    Ok(())
}
