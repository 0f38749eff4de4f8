//! `#[bulkhead(...)]` arguments.

use std::time::Duration;

use proc_macro2::Span;

use crate::args::{Arg, Errors};
use crate::checks;

/// Every key `#[bulkhead]` accepts.
pub const KEYS: &[&str] = &["pool", "max_wait", "name", "crate"];

/// tokio's `Semaphore::MAX_PERMITS` on a 32-bit target, so a value valid here is valid everywhere.
const MAX_POOL: u64 = (u32::MAX >> 3) as u64;

/// Validated `#[bulkhead]` arguments.
pub struct BulkheadArgs {
    pub pool: u64,
    pub max_wait: Duration,
    pub name: Option<(String, Span)>,
    pub krate: Option<syn::Path>,
}

impl BulkheadArgs {
    /// Interprets `args`; `attr_span` is blamed when `pool` is missing.
    pub fn from_args(args: &[Arg], attr_span: Span, errors: &mut Errors) -> BulkheadArgs {
        let mut out = BulkheadArgs {
            pool: 1,
            max_wait: Duration::ZERO,
            name: None,
            krate: None,
        };
        let mut seen: Vec<String> = Vec::new();
        for arg in args {
            let key = arg.key.to_string();
            if !KEYS.contains(&key.as_str()) {
                errors.push(checks::unknown(arg, "bulkhead", KEYS));
                continue;
            }
            if seen.contains(&key) {
                errors.push(checks::duplicate(arg));
                continue;
            }
            seen.push(key.clone());
            let r = match key.as_str() {
                "pool" => checks::count(arg, "calls in flight", MAX_POOL).map(|v| out.pool = v),
                "max_wait" => checks::duration(arg, true).map(|d| out.max_wait = d),
                "name" => checks::name(arg).map(|n| out.name = Some(n)),
                "crate" => checks::crate_path(arg).map(|p| out.krate = Some(p)),
                _ => Err(checks::unknown(arg, "bulkhead", KEYS)),
            };
            if let Err(e) = r {
                errors.push(e);
            }
        }
        if !seen.iter().any(|k| k == "pool") {
            errors.at(
                attr_span,
                "`#[bulkhead]` needs `pool = N`: the most calls allowed in flight at once, like `#[bulkhead(pool = 60)]`",
            );
        }
        out
    }
}
