//! Messages built at compile time from the constants they quote, so a message cannot drift
//! from the limit it states (`ConfigError` holds `&'static str` descriptions).

use std::time::Duration;

/// The longest text built here; a longer one fails to compile (an index out of bounds in
/// a `const`).
const CAPACITY: usize = 96;

/// A string under construction in a `const`: ASCII pieces and decimal numbers.
#[derive(Clone, Copy)]
pub(crate) struct Text {
    buf: [u8; CAPACITY],
    len: usize,
}

impl Text {
    pub(crate) const fn new() -> Text {
        Text {
            buf: [0; CAPACITY],
            len: 0,
        }
    }

    /// Appends `s`.
    pub(crate) const fn str(mut self, s: &str) -> Text {
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            self.buf[self.len] = bytes[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    /// Appends `n` in decimal, without separators (as the values are typed).
    pub(crate) const fn num(mut self, n: u64) -> Text {
        let mut digits = [0u8; 20];
        let (mut count, mut rest) = (0, n);
        loop {
            digits[count] = b'0' + (rest % 10) as u8;
            count += 1;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        while count > 0 {
            count -= 1;
            self.buf[self.len] = digits[count];
            self.len += 1;
        }
        self
    }

    /// Appends `d` as a settings value in its largest exact unit (`1h`, `90s`, `500ms`).
    pub(crate) const fn duration(self, d: Duration) -> Text {
        const UNITS: [(&str, u128); 6] = [
            ("h", 3_600_000_000_000),
            ("m", 60_000_000_000),
            ("s", 1_000_000_000),
            ("ms", 1_000_000),
            ("us", 1_000),
            ("ns", 1),
        ];
        let nanos = d.as_nanos();
        let mut i = 0;
        while i < UNITS.len() - 1 && (nanos == 0 || nanos % UNITS[i].1 != 0) {
            i += 1;
        }
        self.num((nanos / UNITS[i].1) as u64).str(UNITS[i].0)
    }

    pub(crate) const fn len(&self) -> usize {
        self.len
    }

    /// The first `N` bytes (`N` is [`len`](Self::len) where [`text!`] calls it).
    pub(crate) const fn bytes<const N: usize>(&self) -> [u8; N] {
        let mut out = [0u8; N];
        let mut i = 0;
        while i < N {
            out[i] = self.buf[i];
            i += 1;
        }
        out
    }
}

/// The `&'static str` of a [`Text`] expression, evaluated at compile time.
macro_rules! text {
    ($built:expr) => {{
        const BUILT: $crate::const_text::Text = $built;
        const BYTES: [u8; BUILT.len()] = BUILT.bytes();
        const TEXT: &str = match ::core::str::from_utf8(&BYTES) {
            Ok(s) => s,
            Err(_) => panic!("a message is built from UTF-8 pieces"),
        };
        TEXT
    }};
}
pub(crate) use text;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_numbers_and_durations() {
        assert_eq!(
            text!(Text::new().str("1 to ").num(1_000_000)),
            "1 to 1000000"
        );
        assert_eq!(text!(Text::new().num(0)), "0");
        assert_eq!(text!(Text::new().duration(Duration::from_secs(3600))), "1h");
        assert_eq!(text!(Text::new().duration(Duration::from_secs(90))), "90s");
        assert_eq!(
            text!(Text::new().duration(Duration::from_millis(1500))),
            "1500ms"
        );
    }
}
