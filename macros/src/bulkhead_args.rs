//! `#[bulkhead(...)]` arguments: `pool`, `max_wait`, `limit`, `min_pool` and `max_pool` are
//! judged by `fusebox-settings`.

use std::time::Duration;

use fusebox_settings::{
    BulkheadParts, BulkheadSettings, Key, PoolLimit, RawBulkheadSettings, BULKHEAD_KEYS,
};
use proc_macro2::Span;

use crate::args::{Arg, Errors};
use crate::checks;

/// The arguments of `#[bulkhead]` that are not settings.
const NOT_SETTINGS: [&str; 2] = ["name", "crate"];

/// Every key `#[bulkhead]` accepts: the settings as `fusebox-settings` lists them (not
/// written again here), then the other arguments.
pub const KEYS: &[&str] = &{
    let mut all = [""; BULKHEAD_KEYS.len() + NOT_SETTINGS.len()];
    let mut i = 0;
    while i < all.len() {
        all[i] = if i < BULKHEAD_KEYS.len() {
            BULKHEAD_KEYS[i]
        } else {
            NOT_SETTINGS[i - BULKHEAD_KEYS.len()]
        };
        i += 1;
    }
    all
};

/// Validated `#[bulkhead]` arguments.
pub struct BulkheadArgs {
    /// The checked settings (a pool of 1 when any argument was refused: nothing expands then).
    pub settings: BulkheadSettings,
    pub name: Option<(String, Span)>,
    pub krate: Option<syn::Path>,
}

impl BulkheadArgs {
    /// Interprets `args`; `attr_span` is blamed when `pool` is missing.
    pub fn from_args(args: &[Arg], attr_span: Span, errors: &mut Errors) -> BulkheadArgs {
        let mut out = BulkheadArgs {
            settings: BulkheadSettings::__validated(BulkheadParts {
                pool: 1,
                max_wait: Duration::ZERO,
                limit: PoolLimit::Fixed,
            }),
            name: None,
            krate: None,
        };
        let mut raw = RawBulkheadSettings::new();
        let mut bad_value = false;
        // Where each key was given, to spot duplicates and to blame a key that needs another.
        let mut seen: Vec<(&'static str, Span)> = Vec::new();
        for arg in args {
            if let Err((e, is_setting)) = out.read(arg, &mut raw, &mut seen) {
                bad_value |= is_setting;
                errors.push(e);
            }
        }
        // Rules between keys only once every value is good and every key known, so one mistake
        // gives one error: `pol = 5` is the missing `pool`, misspelt.
        let unknown_key = args
            .iter()
            .any(|a| !KEYS.contains(&a.key.to_string().as_str()));
        if !bad_value && !unknown_key {
            match raw.check() {
                Ok(s) => out.settings = s,
                Err(e) => errors.push(checks::config_error(
                    checks::blame(&e, &seen, attr_span),
                    &e,
                )),
            }
        }
        out
    }

    /// Reads one argument: a settings value into `raw`, `name` or `crate` into its field. A
    /// refusal says whether it was a settings value.
    fn read(
        &mut self,
        arg: &Arg,
        raw: &mut RawBulkheadSettings,
        seen: &mut Vec<(&'static str, Span)>,
    ) -> Result<(), (syn::Error, bool)> {
        let key = arg.key.to_string();
        let Some(&known) = KEYS.iter().find(|k| **k == key) else {
            return Err((checks::unknown(arg, "bulkhead", KEYS), false));
        };
        if seen.iter().any(|(k, _)| *k == known) {
            return Err((checks::duplicate(arg), false));
        }
        seen.push((known, arg.key.span()));
        let setting = Key::from_name(known).filter(|k| BULKHEAD_KEYS.contains(&k.name()));
        match (setting, known) {
            (Some(k), _) => {
                checks::set_setting(arg, k, |k, text| raw.set_text(k, text)).map_err(|e| (e, true))
            }
            (None, "name") => checks::name(arg)
                .map(|n| self.name = Some(n))
                .map_err(|e| (e, false)),
            (None, "crate") => checks::crate_path(arg)
                .map(|p| self.krate = Some(p))
                .map_err(|e| (e, false)),
            (None, _) => Err((checks::unknown(arg, "bulkhead", KEYS), false)),
        }
    }
}
