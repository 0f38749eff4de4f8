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
        let mut seen: Vec<(&'static str, Span)> = Vec::new();
        for arg in args {
            let key = arg.key.to_string();
            let Some(known) = KEYS.iter().find(|k| **k == key) else {
                errors.push(checks::unknown(arg, "bulkhead", KEYS));
                continue;
            };
            if seen.iter().any(|(k, _)| k == known) {
                errors.push(checks::duplicate(arg));
                continue;
            }
            seen.push((known, arg.key.span()));
            let setting = Key::from_name(&key).filter(|k| BULKHEAD_KEYS.contains(&k.name()));
            let r = match (setting, key.as_str()) {
                (Some(k), _) => {
                    let r = checks::setting(arg, k).and_then(|(text, span)| {
                        raw.set_text(k.name(), &text)
                            .map_err(|e| checks::config_error(span, &e))
                    });
                    bad_value |= r.is_err();
                    r
                }
                (None, "name") => checks::name(arg).map(|n| out.name = Some(n)),
                (None, "crate") => checks::crate_path(arg).map(|p| out.krate = Some(p)),
                _ => Err(checks::unknown(arg, "bulkhead", KEYS)),
            };
            if let Err(e) = r {
                errors.push(e);
            }
        }
        if !bad_value {
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
}
