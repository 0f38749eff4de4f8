//! A key as it appears in a keyed breaker's name (`name/key`): checked like a name, because a
//! key usually comes from a request (`key = host`) and ends up in logs, metrics and admin paths.
//!
//! - Control characters (a newline, an ANSI escape `ESC [`), the line and paragraph separators,
//!   bidirectional overrides, `/`, `%` and a leading `_` are percent-encoded (`a/b` becomes `a%2Fb`), so a key never reaches a log
//!   verbatim, never adds a path segment to `/breakers/{name}`, and never spells `_overflow`.
//! - A key longer than [`MAX_KEY_LEN`] bytes is cut at a character boundary and ends in `~` and 16
//!   hex digits of a hash of the whole key, so long keys stay apart and bounded.
//!
//! Keys that need none of this (ids, shard numbers, host names) are used as they are.

use std::borrow::Cow;
use std::fmt::Write as _;

use super::key_form::KeyForm;

/// The longest key kept in a name, in bytes (the encoded form).
pub const MAX_KEY_LEN: usize = 128;

pub use crate::settings::config::OVERFLOW_KEY;

/// A key formatted on the stack, for the common case (a short key needing no encoding): a
/// keyed call then formats its key without touching the heap or a thread-local.
pub(crate) struct StackKey {
    buf: [u8; STACK_KEY_LEN],
    len: usize,
}

/// Keys up to this long are formatted on the stack (ids, shard numbers, host names); longer
/// ones take the general path, with the same result.
const STACK_KEY_LEN: usize = 64;

impl StackKey {
    pub(crate) fn new() -> StackKey {
        StackKey {
            buf: [0; STACK_KEY_LEN],
            len: 0,
        }
    }

    /// Writes the decimal digits of an integer (after a `-` when `minus`), as `Display` does;
    /// returns them. Digits need no encoding.
    #[inline]
    pub(crate) fn digits(&mut self, mut n: u64, minus: bool) -> &[u8] {
        // From the end of the buffer backwards: 20 digits and a sign always fit.
        let mut at = STACK_KEY_LEN;
        loop {
            at -= 1;
            self.buf[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        if minus {
            at -= 1;
            self.buf[at] = b'-';
        }
        &self.buf[at..]
    }

    /// The bytes of the key `form` (or `key`'s `Display` when the form is
    /// [`KeyForm::Display`]), when the key is plain: usable as it is, its `str`'s bytes. `None`
    /// when it needs the general path (too long for the stack, or encoded).
    #[inline]
    pub(crate) fn plain_key<'a>(
        &'a mut self,
        form: KeyForm<'a>,
        key: &dyn std::fmt::Display,
    ) -> Option<&'a [u8]> {
        match form {
            KeyForm::Unsigned(n) => Some(self.digits(n, false)),
            KeyForm::Signed(n) => Some(self.digits(n.unsigned_abs(), n < 0)),
            KeyForm::Str(s) => is_plain(s).then_some(s.as_bytes()),
            KeyForm::Display => {
                write!(self, "{key}").ok()?;
                self.plain()
            }
        }
    }

    /// The key's bytes, if it fit and needs no encoding (then it is printable ASCII, so
    /// these are its `str`'s bytes; looked up as bytes, a hit never validates UTF-8).
    #[inline]
    pub(crate) fn plain(&self) -> Option<&[u8]> {
        let bytes = &self.buf[..self.len];
        is_plain_bytes(bytes).then_some(bytes)
    }
}

impl std::fmt::Write for StackKey {
    #[inline]
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let Some(room) = self.buf.get_mut(self.len..end) else {
            return Err(std::fmt::Error);
        };
        room.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// True when `raw` can be used as it is: the common case, checked byte by byte.
#[inline]
fn is_plain(raw: &str) -> bool {
    is_plain_bytes(raw.as_bytes())
}

#[inline]
fn is_plain_bytes(raw: &[u8]) -> bool {
    raw.len() <= MAX_KEY_LEN
        && raw.first() != Some(&b'_')
        && raw
            .iter()
            .all(|b| (0x20..0x7f).contains(b) && *b != b'/' && *b != b'%')
}

fn needs_escape(c: char, first: bool) -> bool {
    c.is_control()
        || matches!(c, '/' | '%')
        || (first && c == '_')
        // Bidirectional overrides and isolates reorder what a terminal shows; the line and
        // paragraph separators break a line in log viewers and JavaScript.
        || matches!(c, '\u{2028}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Writes the name form of `raw` into `out` (cleared first); returns false when `raw` was
/// usable as it is, in which case `out` is left empty and `raw` is the key.
pub(crate) fn encode(raw: &str, out: &mut String) -> bool {
    out.clear();
    if is_plain(raw) {
        return false;
    }
    for (i, c) in raw.chars().enumerate() {
        if needs_escape(c, i == 0) {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
        } else {
            out.push(c);
        }
    }
    if out.len() > MAX_KEY_LEN {
        let mut cut = MAX_KEY_LEN - 17;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        let _ = write!(out, "~{:016x}", fnv1a(raw.as_bytes()));
    }
    true
}

/// `raw`, a value from a request other than a key (an admin's `by`), as a log line may hold
/// it: encoded as a key is when it needs to be, so a newline or an ANSI escape in a request
/// never reaches the logs verbatim. Only the admin router and the fleet take such values.
#[cfg_attr(not(any(feature = "admin", feature = "redis")), allow(dead_code))]
pub(crate) fn loggable(raw: &str) -> Cow<'_, str> {
    let mut out = String::new();
    if encode(raw, &mut out) {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(raw)
    }
}

/// A fixed hash (FNV-1a, 64 bits): the same long key gets the same name in every process.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(raw: &str) -> String {
        let mut out = String::new();
        if encode(raw, &mut out) {
            out
        } else {
            raw.to_owned()
        }
    }

    #[test]
    fn plain_keys_are_kept_as_they_are() {
        for k in ["3", "db-1.internal:5432", "user 42", "a_b"] {
            assert_eq!(name(k), k);
        }
    }

    #[test]
    fn control_characters_slashes_and_the_overflow_key_are_encoded() {
        assert_eq!(name("evil\nINFO fake line"), "evil%0AINFO fake line");
        assert_eq!(name("\u{1b}[31mred"), "%1B[31mred");
        assert_eq!(name("a/open"), "a%2Fopen");
        assert_eq!(name("100%"), "100%25");
        assert_eq!(name(OVERFLOW_KEY), "%5Foverflow");
        // A line separator breaks a line in log viewers (a review found it in `by=`).
        assert_eq!(name("a\u{2028}b"), "a%E2%80%A8b");
        assert_eq!(name("\u{202E}txt"), "%E2%80%AEtxt");
        assert_eq!(name("ünï"), "ünï", "non-ASCII letters are fine");
        // Encoding is injective: `%` itself is encoded, so no two keys share a name.
        assert_ne!(name("%0A"), name("\n"));
    }

    #[test]
    fn a_loggable_value_is_the_key_form_borrowed_when_plain() {
        assert!(matches!(
            loggable("alice@ops team"),
            Cow::Borrowed("alice@ops team")
        ));
        assert_eq!(
            loggable("eve\nINFO forged\u{1b}[2J"),
            "eve%0AINFO forged%1B[2J"
        );
    }

    #[test]
    fn a_key_on_the_stack_is_plain_or_goes_the_general_way() {
        fn stack(k: &dyn std::fmt::Display) -> Option<String> {
            let mut s = StackKey::new();
            write!(s, "{k}").ok()?;
            s.plain().map(|b| String::from_utf8_lossy(b).into_owned())
        }
        assert_eq!(stack(&3).as_deref(), Some("3"));
        assert_eq!(
            stack(&"db-1.internal:5432").as_deref(),
            Some("db-1.internal:5432")
        );
        for k in ["a/b", "_x", "ünï", "evil\n", &"x".repeat(STACK_KEY_LEN + 1)] {
            assert_eq!(stack(&k), None, "{k:?} needs the general path");
        }
        assert_eq!(
            stack(&"x".repeat(STACK_KEY_LEN)),
            Some("x".repeat(STACK_KEY_LEN))
        );
    }

    #[test]
    fn integers_and_strings_give_the_bytes_display_gives() {
        fn fast(form: KeyForm<'_>) -> Option<String> {
            let mut s = StackKey::new();
            let nothing: &dyn std::fmt::Display = &"";
            s.plain_key(form, nothing)
                .map(|b| String::from_utf8(b.to_vec()).unwrap())
        }
        for n in [0, 7, 10, 99, 1234567890, u64::MAX] {
            assert_eq!(fast(KeyForm::Unsigned(n)), Some(n.to_string()));
        }
        for n in [0, -1, 42, -10, i64::MIN, i64::MAX] {
            assert_eq!(fast(KeyForm::Signed(n)), Some(n.to_string()));
        }
        assert_eq!(
            fast(KeyForm::Str("db-1:5432")).as_deref(),
            Some("db-1:5432")
        );
        let long = "x".repeat(STACK_KEY_LEN + 1);
        assert_eq!(
            fast(KeyForm::Str(&long)),
            Some(long.clone()),
            "plain, if long"
        );
        for k in ["a/b", "_x", "ünï", "evil\n", &"x".repeat(MAX_KEY_LEN + 1)] {
            assert_eq!(fast(KeyForm::Str(k)), None, "{k:?} needs the general path");
        }
    }

    #[test]
    fn long_keys_are_cut_and_stay_apart() {
        let a = "x".repeat(1000);
        let b = format!("{}y", "x".repeat(999));
        let (na, nb) = (name(&a), name(&b));
        assert_eq!(na.len(), MAX_KEY_LEN);
        assert_ne!(na, nb);
        assert_eq!(na, name(&a), "stable");
        let wide = "ü".repeat(100);
        assert!(name(&wide).len() <= MAX_KEY_LEN);
    }
}
