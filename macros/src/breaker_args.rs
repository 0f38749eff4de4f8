//! `#[breaker(...)]` arguments: one setter per key, then the cross-key rules.
//!
//! Every check of the runtime's `BreakerBuilder::config` is repeated here, at compile time, so the
//! builder the generated code calls cannot fail on values that came through this module.

use std::collections::HashMap;
use std::time::Duration;

use proc_macro2::Span;
use syn::Expr;

use crate::args::{Arg, Errors};
use crate::checks;

/// Every key `#[breaker]` accepts, in the README's order.
pub const KEYS: &[&str] = &[
    "name",
    "key",
    "max_keys",
    "timeout",
    "half_open_timeout",
    "failure_rate",
    "window",
    "window_calls",
    "min_calls",
    "trip_p50",
    "trip_p90",
    "trip_p95",
    "trip_p99",
    "slow",
    "slow_rate",
    "open_for",
    "backoff",
    "open_for_max",
    "half_open_pct",
    "half_open_window",
    "half_open_calls",
    "failure",
    "fallback",
    "stale_for",
    "stale_key",
    "stale_capacity",
    "stale_max_bytes",
    "stale_fallback",
    "alert_after",
    "crate",
];

/// Largest `u32` count we hand to the runtime.
const MAX_COUNT: u64 = u32::MAX as u64;

/// The most entries a stale cache may keep (its map allocates as it fills, not up front).
const MAX_STALE_CAPACITY: u64 = u32::MAX as u64;

/// The most keys a keyed breaker may hold (the runtime's bound).
const MAX_KEYS: u64 = 1_000_000;

/// Default `stale_capacity`.
pub const STALE_CAPACITY: u64 = 10_000;

/// Default `stale_max_bytes`: 64 MiB of entries, weighed by their size in memory.
pub const STALE_MAX_BYTES: u64 = 64 << 20;

/// The largest `stale_max_bytes` (it must fit a `usize` on 32-bit targets).
const MAX_STALE_BYTES: u64 = u32::MAX as u64;

/// The slow-call rule as written.
#[derive(Clone, Copy)]
pub enum Slow {
    /// `trip_pNN = "..."`.
    Percentile(u8, Duration),
    /// `slow = "..."` (its rate comes from `slow_rate`).
    Bound(Duration),
}

/// Validated `#[breaker]` arguments.
#[derive(Default)]
pub struct BreakerArgs {
    pub name: Option<(String, Span)>,
    pub key: Option<Expr>,
    pub max_keys: Option<u32>,
    pub timeout: Option<Duration>,
    pub half_open_timeout: Option<Duration>,
    pub failure_rate: Option<u8>,
    pub window: Option<Duration>,
    pub window_calls: Option<u32>,
    pub min_calls: Option<u32>,
    pub slow: Option<Slow>,
    pub slow_rate: Option<u8>,
    pub open_for: Option<Duration>,
    pub backoff: Option<f64>,
    pub open_for_max: Option<Duration>,
    pub half_open_pct: Option<u8>,
    pub half_open_window: Option<Duration>,
    pub half_open_calls: Option<u32>,
    pub failure: Option<Expr>,
    pub fallback: Option<Expr>,
    pub stale_for: Option<Duration>,
    pub stale_key: Option<Expr>,
    pub stale_capacity: Option<u64>,
    pub stale_max_bytes: Option<u64>,
    pub stale_fallback: Option<Expr>,
    pub alert_after: Option<Duration>,
    pub krate: Option<syn::Path>,
}

impl BreakerArgs {
    /// Interprets `args`; every problem goes to `errors`, and the rest is still filled in.
    pub fn from_args(args: &[Arg], errors: &mut Errors) -> BreakerArgs {
        let mut out = BreakerArgs::default();
        // Where each key was given, to spot duplicates and to blame the later of two conflicting keys.
        let mut seen: HashMap<String, (usize, Span)> = HashMap::new();
        for (i, arg) in args.iter().enumerate() {
            let key = arg.key.to_string();
            if !KEYS.contains(&key.as_str()) {
                errors.push(checks::unknown(arg, "breaker", KEYS));
                continue;
            }
            if seen.contains_key(&key) {
                errors.push(checks::duplicate(arg));
                continue;
            }
            seen.insert(key.clone(), (i, arg.key.span()));
            if let Err(e) = out.set(&key, arg) {
                errors.push(e);
            }
        }
        out.cross_checks(&seen, errors);
        out
    }

    fn set(&mut self, key: &str, arg: &Arg) -> syn::Result<()> {
        let dur = |arg| checks::duration(arg, false);
        let count = |arg, noun| checks::count(arg, noun, MAX_COUNT).map(|v| v as u32);
        match key {
            "name" => self.name = Some(checks::name(arg)?),
            "key" => self.key = Some(arg.value.clone()),
            "max_keys" => self.max_keys = Some(checks::count(arg, "keys", MAX_KEYS)? as u32),
            "timeout" => self.timeout = Some(dur(arg)?),
            "half_open_timeout" => self.half_open_timeout = Some(dur(arg)?),
            "failure_rate" => self.failure_rate = Some(checks::percent(arg)?),
            "window" => self.window = Some(dur(arg)?),
            "window_calls" => self.window_calls = Some(count(arg, "calls")?),
            "min_calls" => self.min_calls = Some(count(arg, "calls")?),
            "trip_p50" => self.slow = Some(Slow::Percentile(50, dur(arg)?)),
            "trip_p90" => self.slow = Some(Slow::Percentile(90, dur(arg)?)),
            "trip_p95" => self.slow = Some(Slow::Percentile(95, dur(arg)?)),
            "trip_p99" => self.slow = Some(Slow::Percentile(99, dur(arg)?)),
            "slow" => self.slow = Some(Slow::Bound(dur(arg)?)),
            "slow_rate" => self.slow_rate = Some(checks::percent(arg)?),
            "open_for" => self.open_for = Some(dur(arg)?),
            "backoff" => self.backoff = Some(backoff(arg)?),
            "open_for_max" => self.open_for_max = Some(dur(arg)?),
            "half_open_pct" => self.half_open_pct = Some(checks::percent(arg)?),
            "half_open_window" => self.half_open_window = Some(dur(arg)?),
            "half_open_calls" => self.half_open_calls = Some(count(arg, "trial calls")?),
            "failure" => self.failure = Some(arg.value.clone()),
            "fallback" => self.fallback = Some(path_like(arg)?),
            "stale_for" => self.stale_for = Some(dur(arg)?),
            "stale_key" => self.stale_key = Some(arg.value.clone()),
            "stale_capacity" => {
                self.stale_capacity = Some(checks::count(arg, "entries", MAX_STALE_CAPACITY)?)
            }
            "stale_max_bytes" => {
                self.stale_max_bytes = Some(checks::count(arg, "bytes", MAX_STALE_BYTES)?)
            }
            "stale_fallback" => self.stale_fallback = Some(path_like(arg)?),
            "alert_after" => self.alert_after = Some(dur(arg)?),
            "crate" => self.krate = Some(checks::crate_path(arg)?),
            _ => return Err(checks::unknown(arg, "breaker", KEYS)),
        }
        Ok(())
    }

    fn cross_checks(&mut self, seen: &HashMap<String, (usize, Span)>, errors: &mut Errors) {
        let both = |a: &'static str, b: &'static str| match (seen.get(a), seen.get(b)) {
            (Some(x), Some(y)) => Some(if x.0 > y.0 { (a, x.1, b) } else { (b, y.1, a) }),
            _ => None,
        };
        let exclusive: [(&str, &str, &str); 3] = [
            (
                "window",
                "window_calls",
                "the window is either a time span (`window`) or the last N calls (`window_calls`)",
            ),
            (
                "half_open_calls",
                "half_open_pct",
                "half-open admits either a share of traffic for a while (`half_open_pct`, `half_open_window`) or a fixed number of trial calls (`half_open_calls`)",
            ),
            (
                "half_open_calls",
                "half_open_window",
                "half-open admits either a share of traffic for a while (`half_open_pct`, `half_open_window`) or a fixed number of trial calls (`half_open_calls`)",
            ),
        ];
        for (a, b, why) in exclusive {
            if let Some((later, span, earlier)) = both(a, b) {
                errors.at(
                    span,
                    format!("`{later}` cannot be used together with `{earlier}`: {why}"),
                );
            }
        }
        // One slow-call rule per breaker: blame every rule after the first.
        let mut rules: Vec<(usize, Span, &str)> =
            ["trip_p50", "trip_p90", "trip_p95", "trip_p99", "slow"]
                .iter()
                .filter_map(|k| seen.get(*k).map(|(i, s)| (*i, *s, *k)))
                .collect();
        rules.sort_by_key(|r| r.0);
        if let Some((_, _, first)) = rules.first().copied() {
            for (_, span, k) in &rules[1..] {
                errors.at(
                    *span,
                    format!("`{k}` cannot be used together with `{first}`: a breaker has one slow-call rule (`trip_p50`/`trip_p90`/`trip_p95`/`trip_p99`, or `slow` with `slow_rate`)"),
                );
            }
        }
        let needs = |have: &str, need: &str, hint: &str, errors: &mut Errors| {
            if let (Some((_, span)), None) = (seen.get(have), seen.get(need)) {
                errors.at(*span, format!("`{have}` needs `{need}` too: {hint}"));
            }
        };
        needs(
            "slow",
            "slow_rate",
            "add `slow_rate = 20` (percent of slow calls that opens the breaker), or use `trip_p95 = \"...\"`",
            errors,
        );
        needs(
            "slow_rate",
            "slow",
            "add `slow = \"500ms\"` (the latency that makes a call slow); `trip_pNN` sets its own rate",
            errors,
        );
        needs(
            "backoff",
            "open_for_max",
            "growing open periods are always capped; add `open_for_max = \"60s\"`",
            errors,
        );
        needs(
            "open_for_max",
            "backoff",
            "the cap only matters when open periods grow; add `backoff = 2.0`",
            errors,
        );
        needs(
            "max_keys",
            "key",
            "it bounds how many keys get a breaker of their own; add `key = expr`",
            errors,
        );
        for (key, hint) in [
            ("stale_key", "it chooses the key of the last good values"),
            (
                "stale_capacity",
                "it bounds how many last good values are kept",
            ),
            (
                "stale_max_bytes",
                "it bounds the bytes the last good values take",
            ),
            ("stale_fallback", "it answers with a last good value"),
        ] {
            needs(
                key,
                "stale_for",
                &format!("{hint}, and those are kept only with `stale_for = \"10m\"` (how old a value may be served)"),
                errors,
            );
        }
        if let (Some(min), Some(size), Some((_, span))) =
            (self.min_calls, self.window_calls, seen.get("min_calls"))
        {
            if min > size {
                errors.at(
                    *span,
                    format!("`min_calls` = {min} is more than `window_calls` = {size}: the breaker could never judge; use at most {size}"),
                );
            }
        }
        if let (Some(max), Some((_, span))) = (self.open_for_max, seen.get("open_for_max")) {
            let open_for = self.open_for.unwrap_or(Duration::from_secs(30));
            if max < open_for {
                errors.at(
                    *span,
                    format!("`open_for_max` ({max:?}) is shorter than `open_for` ({open_for:?}): the cap must be at least the first open period"),
                );
            }
        }
    }
}

fn backoff(arg: &Arg) -> syn::Result<f64> {
    let what = "a growth factor of at least 1.0, like `backoff = 2.0`";
    let (f, span) = crate::args::float_lit(arg, what)?;
    if !f.is_finite() || f < 1.0 {
        return Err(syn::Error::new(
            span,
            format!("`backoff` takes {what}, not {f}: below 1.0 open periods would shrink"),
        ));
    }
    Ok(f)
}

/// `fallback` and `stale_fallback` name a function; anything else (a call, a literal) is a
/// mistake worth naming.
fn path_like(arg: &Arg) -> syn::Result<Expr> {
    let (call, not_a_path) = if arg.key == "stale_fallback" {
        (
            "`stale_fallback` takes the function itself, not a call: write `stale_fallback = my_fallback` (it is called with the `fusebox::Stale<T>` and the `fusebox::Error<E>`)",
            "`stale_fallback` takes a path to a function `fn(fusebox::Stale<T>, fusebox::Error<E>) -> R` (sync or async), like `stale_fallback = mark_as_stale`",
        )
    } else {
        (
            "`fallback` takes the function itself, not a call: write `fallback = my_fallback` (it is called with the `fusebox::Error<E>`)",
            "`fallback` takes a path to a function `fn(fusebox::Error<E>) -> R` (sync or async), like `fallback = confirm_by_email`",
        )
    };
    match &arg.value {
        Expr::Path(_) | Expr::Closure(_) => Ok(arg.value.clone()),
        Expr::Call(c) => Err(syn::Error::new_spanned(c, call)),
        other => Err(syn::Error::new_spanned(other, not_a_path)),
    }
}
