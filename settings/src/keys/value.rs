//! One value of one key: parsed from text or given to a typed setter, and checked against the
//! key's range alone (rules between keys are `rules.rs`).

use std::time::Duration;

use super::{Key, Kind};
use crate::{parse_duration, ConfigError};

/// A key and its value as text gives them, without the whitespace around each: in
/// `pool = 5 ` or `DB_POOL=" 5"` the spaces are the file's or the shell's layout, not part of
/// the value. The one trimming of every `set_text` (the breaker's, the bulkhead's, the
/// retry's), so all text reads alike.
pub(crate) fn text_pair<'a>(key: &'a str, text: &'a str) -> (&'a str, &'a str) {
    (key.trim(), text.trim())
}

/// A value as parsed from text or given to a typed setter, before its range is checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value {
    Int(u64),
    Float(f64),
    Duration(Duration),
    Word(&'static str),
}

impl Key {
    /// Parses `text` as a value of this key and checks its range: the verdict a settings
    /// file, an environment variable and an attribute literal all get.
    pub(crate) fn parse(self, text: &str) -> Result<Value, ConfigError> {
        let not_a_number = || ConfigError::OutOfRange {
            field: self.field(),
            value: if text.is_empty() {
                "\"\"".into()
            } else {
                text.into()
            },
            expected: self.expected(),
        };
        let v = match self.kind() {
            Kind::Percent | Kind::Count { .. } | Kind::Upto { .. } => {
                Value::Int(text.parse().map_err(|_| not_a_number())?)
            }
            Kind::Factor => Value::Float(text.parse().map_err(|_| not_a_number())?),
            Kind::Duration { .. } | Kind::Span { .. } => Value::Duration(parse_duration(text)?),
            Kind::Word { one_of } => Value::Word(
                one_of
                    .iter()
                    .find(|w| **w == text)
                    .copied()
                    .ok_or_else(not_a_number)?,
            ),
        };
        self.check(v)?;
        Ok(v)
    }

    /// Checks a value of this key against its range alone (cross-key rules come later).
    pub(crate) fn check(self, v: Value) -> Result<(), ConfigError> {
        let out = |value: String| ConfigError::OutOfRange {
            field: self.field(),
            value,
            expected: self.expected(),
        };
        match (self.kind(), v) {
            (Kind::Percent, Value::Int(n)) if !(1..=100).contains(&n) => Err(out(n.to_string())),
            (Kind::Count { max }, Value::Int(n)) if !(1..=max).contains(&n) => {
                Err(out(n.to_string()))
            }
            (Kind::Upto { max }, Value::Int(n)) if n > max => Err(out(n.to_string())),
            (Kind::Factor, Value::Float(f)) if !f.is_finite() || f < 1.0 => Err(out(f.to_string())),
            (Kind::Span { max }, Value::Duration(d)) if d > max => Err(out(format!("{d:?}"))),
            (Kind::Duration { zero_ok: false } | Kind::Span { .. }, Value::Duration(d))
                if d.is_zero() =>
            {
                Err(ConfigError::ZeroDuration {
                    field: self.field(),
                })
            }
            _ => Ok(()),
        }
    }
}
