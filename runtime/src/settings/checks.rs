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
