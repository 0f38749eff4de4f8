//! Overrides read from a configuration file (issue 29, feature `serde`): the `breakers` and
//! `bulkheads` tables of any format serde reads, attributed to [`Source::File`]; the settings
//! are checked where every source's are, by `apply_overrides`.

use fusebox_settings::Source;

use super::overrides::{GuardKind, Overrides};

/// Overrides from any format serde reads (feature `serde`), attributed to [`Source::File`]:
/// a `breakers` and a `bulkheads` map from name or pattern to settings, values as text or as
/// numbers. The shape is the format's to refuse; the settings are checked when applied, so a
/// bad value is the typed [`OverrideError`](crate::OverrideError) of
/// [`Registry::apply_overrides`](crate::Registry::apply_overrides), as from the environment.
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
/// let bad: Overrides = serde_json::from_str(r#"{ "breakers": { "x": { "timeout": "soon" } } }"#).unwrap();
/// let e = registry().apply_overrides(&bad).unwrap_err();
/// assert_eq!((e.name.as_str(), e.key.as_str(), e.value.as_str(), e.source), ("x", "timeout", "soon", Source::File));
/// ```
#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Overrides {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Overrides, D::Error> {
        use std::collections::BTreeMap;
        type Table = BTreeMap<String, BTreeMap<String, de::Text>>;
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File {
            #[serde(default)]
            breakers: Table,
            #[serde(default)]
            bulkheads: Table,
        }
        let f = File::deserialize(d)?;
        let mut o = Overrides::new();
        for (target, table) in [
            (GuardKind::Breaker, f.breakers),
            (GuardKind::Bulkhead, f.bulkheads),
        ] {
            for (name, pairs) in table {
                o = o.entry(
                    target,
                    name,
                    pairs.into_iter().map(|(k, v)| (k, v.0)),
                    Source::File,
                );
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
    use std::fmt;

    /// A setting's value as text, from a string or a number.
    pub(super) struct Text(pub(super) String);

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
