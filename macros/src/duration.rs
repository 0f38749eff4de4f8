//! Compile-time parsing of duration strings: `"800ms"`, `"3s"`, `"1m30s"`, `"2h"`, `"500us"`.

use std::time::Duration;

/// Units from largest to smallest; a string must use them in this order, each at most once.
const UNITS: [(&str, u64); 6] = [
    ("h", 3_600_000_000_000),
    ("m", 60_000_000_000),
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("ns", 1),
];

/// What a bad duration string is told to look like.
pub const EXPECTED: &str =
    "a number with a unit (h, m, s, ms, us, ns), like \"800ms\", \"3s\", \"1m30s\" or \"2h\"";

/// Parses `text`, or says in a few words what is wrong with it.
pub fn parse(text: &str) -> Result<Duration, String> {
    if text.is_empty() {
        return Err("an empty string is not a duration".into());
    }
    let mut rest = text;
    let mut total: u64 = 0;
    let mut last_unit = None;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(format!("`{rest}` does not start with a number"));
        }
        let (num, tail) = rest.split_at(digits);
        let letters = tail.bytes().take_while(u8::is_ascii_alphabetic).count();
        let (unit, tail) = tail.split_at(letters);
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
    fn accepts_the_documented_forms() {
        assert_eq!(parse("800ms"), Ok(Duration::from_millis(800)));
        assert_eq!(parse("3s"), Ok(Duration::from_secs(3)));
        assert_eq!(parse("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse("500us"), Ok(Duration::from_micros(500)));
        assert_eq!(parse("0ms"), Ok(Duration::ZERO));
    }

    #[test]
    fn rejects_what_is_ambiguous_or_malformed() {
        for bad in [
            "", "800", "ms", "3 s", "3sec", "30s1m", "1s1s", "1.5s", "-1s",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should not parse");
        }
        assert!(parse("99999999999h").is_err());
    }
}
