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
