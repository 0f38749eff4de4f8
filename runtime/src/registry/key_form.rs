//! How a keyed call site hands its key over: integers and text as they are, written into the
//! name by the registry without `core::fmt` (about 190 instructions for a `u64`), anything else
//! through `Display`. Which one a key is, the generated code asks at compile time with
//! autoref specialisation (`KeyProbe`), since a blanket `Display` impl cannot be specialised.

/// A key as a call site hands it over. An integer's `Display` is its decimal digits and a
/// string's is its text, so the registry writes those bytes itself; either way the key is the
/// same string.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum KeyForm<'a> {
    /// An unsigned integer.
    Unsigned(u64),
    /// A signed integer.
    Signed(i64),
    /// Text.
    Str(&'a str),
    /// Anything else: formatted with its `Display`.
    Display,
}

/// The generated code's question "is the key an integer or text?", answered at compile time
/// by method resolution: `(&KeyProbe(key)).key_form()` finds [`KeyFormFast`] when the key's
/// type is [`FastKey`], else [`KeyFormDisplay`] one auto-reference further, which holds for
/// every type (a key that is not `Display` is reported by `keyed_breaker`'s bound, at the key).
pub struct KeyProbe<'a, K: ?Sized>(pub &'a K);

/// The probe's answer for integers and text.
pub trait KeyFormFast<'a> {
    /// The key as it is.
    fn key_form(&self) -> KeyForm<'a>;
}

impl<'a, K: FastKey + ?Sized> KeyFormFast<'a> for KeyProbe<'a, K> {
    #[inline]
    fn key_form(&self) -> KeyForm<'a> {
        self.0.form()
    }
}

/// The probe's answer for every other type: formatted with `Display`.
pub trait KeyFormDisplay<'a> {
    /// `KeyForm::Display`.
    fn key_form(&self) -> KeyForm<'a>;
}

impl<'a, K: ?Sized> KeyFormDisplay<'a> for &KeyProbe<'a, K> {
    #[inline]
    fn key_form(&self) -> KeyForm<'a> {
        KeyForm::Display
    }
}

/// A key whose `Display` is its decimal digits or its text, handed over as it is.
pub trait FastKey {
    /// The key as it is.
    fn form(&self) -> KeyForm<'_>;
}

macro_rules! fast_integers {
    ($variant:ident: $($t:ty),*) => {$(
        impl FastKey for $t {
            #[inline]
            fn form(&self) -> KeyForm<'_> {
                KeyForm::$variant((*self).into())
            }
        }
    )*};
}
fast_integers!(Unsigned: u8, u16, u32, u64);
fast_integers!(Signed: i8, i16, i32, i64);

impl FastKey for usize {
    #[inline]
    fn form(&self) -> KeyForm<'_> {
        // usize is at most 64 bits on every target std supports.
        u64::try_from(*self).map_or(KeyForm::Display, KeyForm::Unsigned)
    }
}

impl FastKey for isize {
    #[inline]
    fn form(&self) -> KeyForm<'_> {
        i64::try_from(*self).map_or(KeyForm::Display, KeyForm::Signed)
    }
}

impl FastKey for str {
    #[inline]
    fn form(&self) -> KeyForm<'_> {
        KeyForm::Str(self)
    }
}

impl FastKey for String {
    #[inline]
    fn form(&self) -> KeyForm<'_> {
        KeyForm::Str(self)
    }
}

impl FastKey for Box<str> {
    #[inline]
    fn form(&self) -> KeyForm<'_> {
        KeyForm::Str(self)
    }
}

impl FastKey for std::sync::Arc<str> {
    #[inline]
    fn form(&self) -> KeyForm<'_> {
        KeyForm::Str(self)
    }
}

impl FastKey for std::borrow::Cow<'_, str> {
    #[inline]
    fn form(&self) -> KeyForm<'_> {
        KeyForm::Str(self)
    }
}

impl<T: FastKey + ?Sized> FastKey for &T {
    #[inline]
    fn form(&self) -> KeyForm<'_> {
        (**self).form()
    }
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use super::*;

    /// The form a key gets in generated code (the same two lines).
    macro_rules! form {
        ($key:expr) => {{
            #[allow(unused_imports)]
            use super::{KeyFormDisplay as _, KeyFormFast as _};
            format!("{:?}", (&KeyProbe($key)).key_form())
        }};
    }

    struct Host;
    impl fmt::Display for Host {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("h")
        }
    }

    fn generic<K: fmt::Display>(k: &K) -> String {
        form!(k)
    }

    #[test]
    fn integers_and_text_go_as_they_are_and_the_rest_by_display() {
        assert_eq!(form!(&3u8), "Unsigned(3)");
        assert_eq!(form!(&7usize), "Unsigned(7)");
        assert_eq!(form!(&-2i32), "Signed(-2)");
        assert_eq!(form!("a"), "Str(\"a\")");
        assert_eq!(form!(&"a"), "Str(\"a\")");
        assert_eq!(form!(&String::from("b")), "Str(\"b\")");
        assert_eq!(form!(&std::sync::Arc::<str>::from("c")), "Str(\"c\")");
        assert_eq!(form!(&Host), "Display");
        assert_eq!(form!(&1.5f64), "Display", "a float's digits are Display's");
        assert_eq!(form!(&u128::MAX), "Display");
        assert_eq!(
            generic(&3u8),
            "Display",
            "a generic key: its type is unknown here"
        );
    }
}
