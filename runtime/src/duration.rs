//! Durations as people write them in configuration: `"800ms"`, `"3s"`, `"1m30s"`, `"2h"`.

use std::time::Duration;

use crate::error::ConfigError;

/// Units from the largest down, in nanoseconds; each may appear once, in this order.
const UNITS: [(&str, u64); 5] = [
    ("h", 3_600_000_000_000),
    ("m", 60_000_000_000),
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
    ("us", 1_000),
];

/// Parses a duration: one or more `<integer><unit>` parts with units `h`, `m`, `s`, `ms`, `us`
/// from the largest down (`"1m30s"`, `"1s500ms"`), no spaces or signs.
///
/// Anything else, including a value too large for a `Duration` of nanoseconds in a `u64`,
/// is [`ConfigError::BadDuration`].
///
/// ```
/// use std::time::Duration;
/// use fusebox_runtime::{parse_duration, ConfigError};
/// assert_eq!(parse_duration("800ms"), Ok(Duration::from_millis(800)));
/// assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
/// assert!(matches!(parse_duration("3 s"), Err(ConfigError::BadDuration { .. })));
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, ConfigError> {
    let bad = || ConfigError::BadDuration { text: text.into() };
    let mut rest = text;
    let mut total: u64 = 0;
    // Index into UNITS of the next unit allowed: strictly decreasing units.
    let mut next_unit = 0;
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let letters = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
        let unit = &rest[..letters];
        rest = &rest[letters..];
        let i = UNITS[next_unit..]
            .iter()
            .position(|(u, _)| *u == unit)
            .ok_or_else(bad)?
            + next_unit;
        next_unit = i + 1;
        total = n
            .checked_mul(UNITS[i].1)
            .and_then(|ns| total.checked_add(ns))
            .ok_or_else(bad)?;
    }
    Ok(Duration::from_nanos(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_what_the_docs_show() {
        let ok = |t: &str, d: Duration| assert_eq!(parse_duration(t), Ok(d), "{t}");
        ok("800ms", Duration::from_millis(800));
        ok("3s", Duration::from_secs(3));
        ok("1m", Duration::from_secs(60));
        ok("1m30s", Duration::from_secs(90));
        ok("2h", Duration::from_secs(7200));
        ok("500us", Duration::from_micros(500));
        ok("0ms", Duration::ZERO);
        ok("1h2m3s4ms5us", Duration::from_micros(3_723_004_005));
    }

    #[test]
    fn refuses_everything_else_with_a_typed_error() {
        for t in [
            "",
            "ms",
            "3",
            "3 s",
            " 3s",
            "3s ",
            "-3s",
            "+3s",
            "1.5s",
            "3sec",
            "3S",
            "30s1m",
            "1s1s",
            "1m1h",
            "5ns",
            "1d",
            "s3",
            "3s,",
            "١s",
            "99999999999h",
            "18446744073709551616s",
        ] {
            assert_eq!(
                parse_duration(t),
                Err(ConfigError::BadDuration { text: t.into() }),
                "{t:?}"
            );
        }
    }
}
