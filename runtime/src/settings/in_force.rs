//! [`SettingInForce`]: one setting of a breaker or bulkhead as it is now, with the code's value
//! and where the one in force came from (issue 29).

use std::sync::Arc;

use fusebox_settings::{Settings, Source};

/// One setting in force: its key, its value as text (as an override would write it), the
/// code's value, and where the value in force came from. Listed by
/// [`Breaker::settings_in_force`](crate::Breaker::settings_in_force), `metrics()`
/// (`settings`), the JSON and the operator's page.
///
/// A setting derived from another (the slow rule from `timeout`) that an override changed is
/// attributed to that override's source.
///
/// ```
/// use fusebox::Breaker;
/// use fusebox::settings::Source;
/// let b = Breaker::builder("in-force-doc").failure_rate(30).build_detached().unwrap();
/// let s = b.settings_in_force();
/// let rate = s.iter().find(|s| s.key == "failure_rate").unwrap();
/// assert_eq!((rate.value.as_str(), rate.source), ("30", Source::Code));
/// assert!(!rate.overridden());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct SettingInForce {
    /// The key, as the attribute writes it (`"failure_rate"`).
    pub key: &'static str,
    /// The value in force, as text (`"30"`, `"800ms"`); `"off"` for a setting of the code's
    /// that an override turned off (a slow rule derived from `timeout` that a given
    /// `failure_rate` ends, as it would in the attribute).
    pub value: String,
    /// The code's value (the attribute's or the builder's, or the default they left);
    /// `None` when the code has no such key (no timeout, another window kind).
    pub code: Option<String>,
    /// Where the value in force came from.
    pub source: Source,
}

impl SettingInForce {
    /// Whether the value in force is not the code's.
    ///
    /// ```
    /// use fusebox::Breaker;
    /// use fusebox::settings::Source;
    /// let b = Breaker::builder("overridden-doc").build_detached().unwrap();
    /// b.change_settings([("open_for", "5s")], Source::Admin, None).unwrap();
    /// let over: Vec<_> = b.settings_in_force().into_iter().filter(|s| s.overridden()).collect();
    /// assert_eq!((over[0].key, over[0].code.as_deref()), ("open_for", Some("30s")));
    /// ```
    pub fn overridden(&self) -> bool {
        self.source != Source::Code
    }
}

/// The value of a setting the code has and an override turned off.
pub(crate) const OFF: &str = "off";

/// The settings in force: `now`'s pairs, each attributed to the source that gave its key
/// (`given`), else to the source of the key it follows (`derived_from`), unless it is the
/// code's value (`Code`) or unchanged from `before` (its source there).
pub(crate) fn attribute(
    code: &[(&'static str, String)],
    before: Option<&[SettingInForce]>,
    now: Vec<(&'static str, String)>,
    given: &[(String, Source)],
    source: Source,
) -> Vec<SettingInForce> {
    // A key of the code's that the override turned off (no slow rule, no timeout) is listed
    // as `off`, so what changed shows in full.
    let off: Vec<(&'static str, String)> = code
        .iter()
        .filter(|(k, _)| !now.iter().any(|(n, _)| n == k))
        .map(|(k, _)| (*k, OFF.to_owned()))
        .collect();
    now.into_iter()
        .chain(off)
        .map(|(key, value)| {
            let code_value = code.iter().find(|(k, _)| *k == key).map(|(_, v)| v.clone());
            let source = if code_value.as_deref() == Some(value.as_str()) {
                Source::Code
            } else if let Some((_, s)) = given.iter().rev().find(|(k, _)| k == key) {
                *s
            } else {
                before
                    .and_then(|b| b.iter().find(|s| s.key == key && s.value == value))
                    .map_or_else(|| derived_from(given, &value, source), |s| s.source)
            };
            SettingInForce {
                key,
                value,
                code: code_value,
                source,
            }
        })
        .collect()
}

/// The source of a value no key gave: one derived from `timeout` follows the `timeout` given
/// (file `timeout = "2s"`, env `alert_after`: the slow rule is the file's), or without one the
/// slow rule given, whose bound then scales what is derived; one turned off
/// (`off`) was turned off by a threshold, window or recovery key given, the last one's;
/// else `fallback`, the most specific (then last) override's.
fn derived_from(given: &[(String, Source)], value: &str, fallback: Source) -> Source {
    let last = |of: &dyn Fn(&str) -> bool| given.iter().rev().find(|(k, _)| of(k)).map(|(_, s)| *s);
    let found = if value == OFF {
        last(&|k| k != "timeout")
    } else {
        // Without a `timeout`, a slow rule's bound is the scale the rest is derived from.
        last(&|k| k == "timeout")
            .or_else(|| last(&|k| k.starts_with("trip_p") || k == "slow" || k == "slow_rate"))
    };
    found.unwrap_or(fallback)
}

/// Every setting of `code` attributed to the code.
pub(crate) fn from_code(code: Vec<(&'static str, String)>) -> Vec<SettingInForce> {
    let pairs = code.clone();
    attribute(&pairs, None, code, &[], Source::Code)
}

thread_local! {
    /// The last code settings listed, and their list: the breakers of one keyed name (and
    /// many static ones) share their settings, so `metrics()` over 10 000 of them writes the
    /// text once, not 10 000 times.
    static LAST: std::cell::RefCell<Option<(Settings, Arc<[SettingInForce]>)>> =
        const { std::cell::RefCell::new(None) };
}

/// [`from_code`] of a breaker's settings, remembered for the next breaker with the same ones.
pub(crate) fn of_code(settings: &Settings) -> Arc<[SettingInForce]> {
    LAST.with(|last| {
        let Ok(mut last) = last.try_borrow_mut() else {
            return from_code(settings.to_text()).into();
        };
        match &*last {
            Some((s, list)) if s == settings => list.clone(),
            _ => {
                let list: Arc<[SettingInForce]> = from_code(settings.to_text()).into();
                *last = Some((settings.clone(), list.clone()));
                list
            }
        }
    })
}

/// Each given key's source: `sources`' where it says (the last word on a key wins), else
/// `source`. For a live change whose keys came from more than one place (breakers and
/// bulkheads alike).
pub(crate) fn by_key(
    pairs: &[(String, String)],
    source: Source,
    sources: &[(String, Source)],
) -> Vec<(String, Source)> {
    pairs
        .iter()
        .map(|(k, _)| {
            let s = sources
                .iter()
                .rev()
                .find(|(sk, _)| sk == k)
                .map_or(source, |(_, s)| *s);
            (k.clone(), s)
        })
        .collect()
}
