//! `#[bulkhead(...)]` arguments: `pool`, `max_wait`, `limit`, `min_pool` and `max_pool` are
//! judged by `fusebox-settings`.

use std::time::Duration;

use fusebox_settings::{Key, PoolLimit, RawBulkheadSettings};
use proc_macro2::Span;

use crate::args::{Arg, Errors};
use crate::checks;

/// Every key `#[bulkhead]` accepts.
pub const KEYS: &[&str] = &[
    "pool", "max_wait", "limit", "min_pool", "max_pool", "name", "crate",
];

/// Validated `#[bulkhead]` arguments.
pub struct BulkheadArgs {
    pub pool: usize,
    pub max_wait: Duration,
    pub limit: PoolLimit,
    pub name: Option<(String, Span)>,
    pub krate: Option<syn::Path>,
}

impl BulkheadArgs {
    /// Interprets `args`; `attr_span` is blamed when `pool` is missing.
    pub fn from_args(args: &[Arg], attr_span: Span, errors: &mut Errors) -> BulkheadArgs {
        let mut out = BulkheadArgs {
            pool: 1,
            max_wait: Duration::ZERO,
            limit: PoolLimit::Fixed,
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
            let r = match key.as_str() {
                "pool" | "max_wait" | "limit" | "min_pool" | "max_pool" => {
                    let k = Key::from_name(&key).unwrap_or(Key::Pool);
                    let r = checks::setting(arg, k).and_then(|(text, span)| {
                        raw.set_text(k.name(), &text)
                            .map_err(|e| checks::config_error(span, &e))
                    });
                    bad_value |= r.is_err();
                    r
                }
                "name" => checks::name(arg).map(|n| out.name = Some(n)),
                "crate" => checks::crate_path(arg).map(|p| out.krate = Some(p)),
                _ => Err(checks::unknown(arg, "bulkhead", KEYS)),
            };
            if let Err(e) = r {
                errors.push(e);
            }
        }
        if !bad_value {
            match raw.check() {
                Ok(s) => (out.pool, out.max_wait, out.limit) = (s.pool(), s.max_wait(), s.limit()),
                Err(e) => errors.push(checks::config_error(
                    checks::blame(&e, &seen, attr_span),
                    &e,
                )),
            }
        }
        out
    }
}
