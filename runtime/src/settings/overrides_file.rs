//! Overrides read from a configuration file (issue 29, feature `serde`): the `breakers` and
//! `bulkheads` tables of any format serde reads, attributed to [`Source::File`]; the settings
//! are checked where every source's are, by `apply_overrides`.

use fusebox_settings::Source;

use super::overrides::{GuardKind, Overrides};

/// Overrides from any format serde reads (feature `serde`), attributed to [`Source::File`]:
/// a `breakers` and a `bulkheads` map from name or pattern to settings, values as text or as
/// numbers. The shape is the format's to refuse, and so is a name or a key given twice (in
/// any format, as TOML refuses them: JSON's would keep the last without a word); the settings
/// are checked when applied, so a bad value is the typed [`OverrideError`](crate::OverrideError)
/// of [`Registry::apply_overrides`](crate::Registry::apply_overrides), as from the environment.
///
/// ```
/// use fusebox::registry;
/// use fusebox::settings::{Overrides, Source};
/// let o: Overrides = serde_json::from_str(
///     r#"{ "breakers": { "payments/*": { "failure_rate": 30, "timeout": "2s" } },
///          "bulkheads": { "db": { "pool": 40 } } }"#,
/// ).unwrap();
/// assert_eq!(o.len(), 2);
/// assert!(serde_json::from_str::<Overrides>(r#"{ "breaker": {} }"#).is_err());
/// let twice = serde_json::from_str::<Overrides>(r#"{ "breakers": { "x": { "timeout": "1s", "timeout": "2s" } } }"#);
/// assert!(twice.unwrap_err().to_string().starts_with("`timeout` is given twice for the breaker `x`"));
/// let bad: Overrides = serde_json::from_str(r#"{ "breakers": { "x": { "timeout": "soon" } } }"#).unwrap();
/// let e = registry().apply_overrides(&bad).unwrap_err();
/// assert_eq!((e.name.as_str(), e.key.as_str(), e.value.as_str(), e.source), ("x", "timeout", "soon", Source::File));
/// ```
#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Overrides {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Overrides, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File {
            #[serde(default, deserialize_with = "de::breakers")]
            breakers: de::Table,
            #[serde(default, deserialize_with = "de::bulkheads")]
            bulkheads: de::Table,
        }
        let f = File::deserialize(d)?;
        let mut o = Overrides::new();
        for (target, table) in [
            (GuardKind::Breaker, f.breakers),
            (GuardKind::Bulkhead, f.bulkheads),
        ] {
            for (name, pairs) in table {
                o = o.entry(target, name, pairs, Source::File);
            }
        }
        // Values are checked where every source's are, by `apply_overrides`, so a bad one in a
        // file is the same typed `OverrideError` (source `file`) as one from the environment,
        // not the format's error text.
        Ok(o)
    }
}

#[cfg(feature = "serde")]
mod de {
    use std::collections::BTreeMap;
    use std::fmt;

    use serde::de::{DeserializeSeed, Error, MapAccess, Visitor};
    use serde::Deserializer;

    use super::GuardKind;

    /// Names (or patterns) to their settings, each a key to its value as text.
    pub(super) type Table = BTreeMap<String, BTreeMap<String, String>>;

    /// The `breakers` table.
    pub(super) fn breakers<'de, D: Deserializer<'de>>(d: D) -> Result<Table, D::Error> {
        d.deserialize_map(Names(GuardKind::Breaker))
    }

    /// The `bulkheads` table.
    pub(super) fn bulkheads<'de, D: Deserializer<'de>>(d: D) -> Result<Table, D::Error> {
        d.deserialize_map(Names(GuardKind::Bulkhead))
    }

    /// A table of names, refusing one given twice: a format that keeps the last of a repeated
    /// name (JSON does) would drop the first one's settings without a word, where TOML refuses.
    struct Names(GuardKind);

    impl<'de> Visitor<'de> for Names {
        type Value = Table;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "a map from {} name or pattern to its settings", self.0)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Table, A::Error> {
            let mut table = Table::new();
            while let Some(name) = map.next_key::<String>()? {
                if table.contains_key(&name) {
                    return Err(A::Error::custom(format_args!(
                        "the {} `{name}` is given twice",
                        self.0
                    )));
                }
                let pairs = map.next_value_seed(Pairs(self.0, &name))?;
                table.insert(name, pairs);
            }
            Ok(table)
        }
    }

    /// The settings of one name, refusing a key given twice (which would hide the first value,
    /// a bad one included), as the environment's form and TOML refuse it.
    struct Pairs<'a>(GuardKind, &'a str);

    impl<'de> DeserializeSeed<'de> for Pairs<'_> {
        type Value = BTreeMap<String, String>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }
    }

    impl<'de> Visitor<'de> for Pairs<'_> {
        type Value = BTreeMap<String, String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a map from setting to value")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut pairs = BTreeMap::new();
            while let Some(key) = map.next_key::<String>()? {
                if pairs.contains_key(&key) {
                    return Err(A::Error::custom(format_args!(
                        "`{key}` is given twice for the {} `{}`",
                        self.0, self.1
                    )));
                }
                let Text(value) = map.next_value()?;
                pairs.insert(key, value);
            }
            Ok(pairs)
        }
    }

    /// A setting's value as text, from a string or a number.
    struct Text(String);

    impl<'de> serde::Deserialize<'de> for Text {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
            struct V;
            impl serde::de::Visitor<'_> for V {
                type Value = Text;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a setting's value: text like \"800ms\", or a number")
                }
                fn visit_str<E>(self, v: &str) -> Result<Text, E> {
                    Ok(Text(v.to_owned()))
                }
                fn visit_u64<E>(self, v: u64) -> Result<Text, E> {
                    Ok(Text(v.to_string()))
                }
                fn visit_i64<E>(self, v: i64) -> Result<Text, E> {
                    Ok(Text(v.to_string()))
                }
                fn visit_f64<E>(self, v: f64) -> Result<Text, E> {
                    Ok(Text(v.to_string()))
                }
            }
            d.deserialize_any(V)
        }
    }
}
