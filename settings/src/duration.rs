//! Durations as people write them: `"800ms"`, `"3s"`, `"1m30s"`, `"2h"`, `"500ns"`.

use std::time::Duration;

use crate::ConfigError;

/// Units from the largest down, in nanoseconds; each may appear once, in this order.
const UNITS: [(&str, u64); 6] = [
    ("h", 3_600_000_000_000),
    ("m", 60_000_000_000),
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("ns", 1),
];

/// A duration in whole nanoseconds, saturating at `u64::MAX` (584 years): how settings,
/// deadlines and generated code store durations in 8 bytes.
///
/// ```
/// use std::time::Duration;
/// assert_eq!(fusebox_settings::nanos(Duration::from_millis(3)), 3_000_000);
/// assert_eq!(fusebox_settings::nanos(Duration::MAX), u64::MAX);
/// ```
pub fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// What a bad duration is told to look like (part of [`ConfigError::BadDuration`]'s message).
pub(crate) const EXPECTED: &str =
    "a number with a unit (h, m, s, ms, us, ns), like \"800ms\", \"3s\", \"1m30s\" or \"2h\"";

/// Parses a duration: one or more `<integer><unit>` parts with units `h`, `m`, `s`, `ms`,
/// `us`, `ns` from the largest down (`"1m30s"`, `"1s500ms"`), no spaces or signs.
///
/// Anything else, including a value too large for a `u64` of nanoseconds, is
/// [`ConfigError::BadDuration`], whose message says what is wrong.
///
/// ```
/// use std::time::Duration;
/// use fusebox::settings::{parse_duration, ConfigError};
/// assert_eq!(parse_duration("800ms"), Ok(Duration::from_millis(800)));
/// assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
/// assert_eq!(parse_duration("500ns"), Ok(Duration::from_nanos(500)));
/// let err = parse_duration("3 s").unwrap_err();
/// assert!(matches!(err, ConfigError::BadDuration { .. }));
/// assert!(err.to_string().contains("unknown unit ` s`") || err.to_string().contains("`3` has no unit"));
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, ConfigError> {
    parse(text).map_err(|_| ConfigError::BadDuration { text: text.into() })
}

/// Why `text` is not a duration, in a few words (`None` if it is one).
pub(crate) fn diagnose(text: &str) -> Option<String> {
    parse(text).err()
}

fn parse(text: &str) -> Result<Duration, String> {
    if text.is_empty() {
        return Err("an empty string is not a duration".into());
    }
    let mut rest = text;
    let mut total: u64 = 0;
    // Index into UNITS of the last unit used: units must strictly decrease.
    let mut last_unit = None;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(format!("`{rest}` does not start with a number"));
        }
        let (num, tail) = rest.split_at(digits);
        let letters = tail.bytes().take_while(u8::is_ascii_alphabetic).count();
        let (unit, tail) = tail.split_at(letters);
        let fraction_then_unit = tail.strip_prefix('.').is_some_and(|f| {
            let f = f.trim_start_matches(|c: char| c.is_ascii_digit());
            f.starts_with(|c: char| c.is_ascii_alphabetic())
        });
        if unit.is_empty() && fraction_then_unit {
            return Err(format!(
                "`{num}.` is a fraction: a duration takes whole numbers of a unit (\"1500ms\", not \"1.5s\")"
            ));
        }
        if unit.is_empty() {
            return Err(format!("`{num}` has no unit"));
        }
        let Some(idx) = UNITS.iter().position(|(u, _)| *u == unit) else {
            return Err(format!("unknown unit `{unit}`"));
        };
        if last_unit.is_some_and(|l| idx <= l) {
            return Err("units must go from largest to smallest, each once (\"1m30s\")".into());
        }
        last_unit = Some(idx);
        let n: u64 = num.parse().map_err(|_| format!("`{num}` is too large"))?;
        total = n
            .checked_mul(UNITS[idx].1)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| "the duration is too long (more than 500 years)".to_owned())?;
        rest = tail;
    }
    Ok(Duration::from_nanos(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_every_unit_largest_first() {
        let ok = |t: &str, d: Duration| assert_eq!(parse_duration(t), Ok(d), "{t}");
        ok("800ms", Duration::from_millis(800));
        ok("3s", Duration::from_secs(3));
        ok("1m", Duration::from_secs(60));
        ok("1m30s", Duration::from_secs(90));
        ok("2h", Duration::from_secs(7200));
        ok("500us", Duration::from_micros(500));
        ok("500ns", Duration::from_nanos(500));
        ok("0ms", Duration::ZERO);
        ok("1h2m3s4ms5us6ns", Duration::from_nanos(3_723_004_005_006));
    }

    #[test]
    fn refuses_everything_else_saying_why() {
        for (t, why) in [
            ("", "an empty string is not a duration"),
            ("ms", "`ms` does not start with a number"),
            ("3", "`3` has no unit"),
            ("3 s", "`3` has no unit"),
            (" 3s", "` 3s` does not start with a number"),
            ("3s ", "` ` does not start with a number"),
            ("-3s", "`-3s` does not start with a number"),
            ("+3s", "`+3s` does not start with a number"),
            (
                "1.5s",
                "`1.` is a fraction: a duration takes whole numbers of a unit (\"1500ms\", not \"1.5s\")",
            ),
            ("3sec", "unknown unit `sec`"),
            ("3S", "unknown unit `S`"),
            ("1d", "unknown unit `d`"),
            (
                "30s1m",
                "units must go from largest to smallest, each once (\"1m30s\")",
            ),
            (
                "1s1s",
                "units must go from largest to smallest, each once (\"1m30s\")",
            ),
            ("3s,", "`,` does not start with a number"),
            ("١s", "`١s` does not start with a number"),
            (
                "99999999999h",
                "the duration is too long (more than 500 years)",
            ),
            (
                "18446744073709551616s",
                "`18446744073709551616` is too large",
            ),
        ] {
            let err = parse_duration(t).unwrap_err();
            assert_eq!(err, ConfigError::BadDuration { text: t.into() }, "{t:?}");
            assert_eq!(diagnose(t).as_deref(), Some(why), "{t:?}");
            assert!(err.to_string().contains(why), "{t:?}: {err}");
        }
    }
}
