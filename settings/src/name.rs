//! Registry names: what a breaker or bulkhead may be called.

use crate::ConfigError;

/// Checks a registry name: not empty, no control characters (it is printed in logs and
/// metrics, where a newline would forge a line).
///
/// ```
/// use fusebox_settings::{check_name, ConfigError};
/// assert!(check_name("payments").is_ok());
/// assert!(matches!(check_name(""), Err(ConfigError::BadName { .. })));
/// assert!(matches!(check_name("a\nb"), Err(ConfigError::BadName { .. })));
/// ```
pub fn check_name(name: &str) -> Result<(), ConfigError> {
    let reason = if name.is_empty() {
        "a name cannot be empty"
    } else if name.chars().any(char::is_control) {
        "a name cannot contain control characters"
    } else {
        return Ok(());
    };
    Err(ConfigError::BadName {
        name: name.into(),
        reason,
    })
}

/// Checks a breaker's name: a registry name ([`check_name`]) without `/`, which joins a keyed
/// breaker's name to its key (`payments/eu`): a plain breaker called `payments/eu` and the
/// key `eu` of `payments` would be two breakers under one name.
///
/// ```
/// use fusebox_settings::{check_breaker_name, ConfigError};
/// assert!(check_breaker_name("payments").is_ok());
/// assert!(matches!(check_breaker_name("payments/eu"), Err(ConfigError::BadName { .. })));
/// ```
pub fn check_breaker_name(name: &str) -> Result<(), ConfigError> {
    check_name(name)?;
    if name.contains('/') {
        return Err(ConfigError::BadName {
            name: name.into(),
            reason: "a breaker's name cannot contain `/`, which joins a keyed breaker's name to its key (`payments/eu`); use `-`, `.` or `::`",
        });
    }
    Ok(())
}
