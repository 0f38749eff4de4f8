//! `#[breaker(...)]` arguments: tokens are read here, settings are judged by `fusebox-settings`.
//!
//! Every settings value goes through `RawSettings::set_text` and the whole set through
//! `RawSettings::check`, the checks the runtime's builder and text parsing run: what compiles
//! is exactly what the breaker runs with. The arguments that are not settings (`name`, `key`,
//! `failure`, `ignore`, `failure_if_ok`, `fallback`, `stale_*`, `crate`) are checked here.

use std::collections::HashMap;
use std::time::Duration;

use fusebox_settings::{Key, RawSettings, Settings, BREAKER_KEYS};
use proc_macro2::Span;
use syn::Expr;

use crate::args::{Arg, Errors};
use crate::checks;

/// The arguments of `#[breaker]` that are not settings (the runtime's breaker never sees them).
const NOT_SETTINGS: [&str; 10] = [
    "failure",
    "ignore",
    "failure_if_ok",
    "fallback",
    "stale_for",
    "stale_key",
    "stale_capacity",
    "stale_max_bytes",
    "stale_fallback",
    "crate",
];

/// Every key `#[breaker]` accepts: `name`, `key`, the settings as `fusebox-settings` lists
/// them (not written again here), then the other arguments.
pub const KEYS: &[&str] = &{
    let mut all = [""; 2 + BREAKER_KEYS.len() + NOT_SETTINGS.len()];
    all[0] = "name";
    all[1] = "key";
    let mut i = 0;
    while i < BREAKER_KEYS.len() {
        all[2 + i] = BREAKER_KEYS[i];
        i += 1;
    }
    let mut j = 0;
    while j < NOT_SETTINGS.len() {
        all[2 + i + j] = NOT_SETTINGS[j];
        j += 1;
    }
    all
};

/// The most entries a stale cache may keep (its map allocates as it fills, not up front).
const MAX_STALE_CAPACITY: u64 = u32::MAX as u64;

/// Default `stale_capacity`.
pub const STALE_CAPACITY: u64 = 10_000;

/// Default `stale_max_bytes`: 64 MiB of entries, weighed by their size in memory.
pub const STALE_MAX_BYTES: u64 = 64 << 20;

/// The largest `stale_max_bytes` (it must fit a `usize` on 32-bit targets).
const MAX_STALE_BYTES: u64 = u32::MAX as u64;

/// Validated `#[breaker]` arguments.
#[derive(Default)]
pub struct BreakerArgs {
    pub name: Option<(String, Span)>,
    pub key: Option<Expr>,
    /// The checked settings (the defaults when any argument was refused: nothing expands then).
    pub settings: Settings,
    /// The settings keys the user wrote, in order, with the span of each key.
    pub given: Vec<(&'static str, Span)>,
    pub failure: Option<Expr>,
    /// `ignore = path`: `fn(&E) -> bool`, true for an error that is neither success nor
    /// failure (checked before `failure`).
    pub ignore: Option<Expr>,
    /// `failure_if_ok = path`: `fn(&T) -> bool`, true for an `Ok` value that is a failure.
    pub failure_if_ok: Option<Expr>,
    pub fallback: Option<Expr>,
    pub stale_for: Option<Duration>,
    pub stale_key: Option<Expr>,
    pub stale_capacity: Option<u64>,
    pub stale_max_bytes: Option<u64>,
    pub stale_fallback: Option<Expr>,
    pub krate: Option<syn::Path>,
}

impl BreakerArgs {
    /// Interprets `args`; every problem goes to `errors`, and the rest is still filled in.
    pub fn from_args(args: &[Arg], errors: &mut Errors) -> BreakerArgs {
        let mut out = BreakerArgs::default();
        let mut raw = RawSettings::new();
        let mut bad_value = false;
        // Where each key was given, to spot duplicates and to blame a key that needs another.
        let mut seen: HashMap<String, Span> = HashMap::new();
        for arg in args {
            if let Err(refused) = out.read(arg, &mut raw, &mut seen) {
                bad_value |= refused.is_setting;
                errors.push(refused.error);
            }
        }
        // Rules between keys only once every value is good and every key known, so one mistake
        // gives one error: `slow_rte = 20` is the missing `slow_rate`, misspelt.
        let unknown_key = args
            .iter()
            .any(|a| !KEYS.contains(&a.key.to_string().as_str()));
        if !bad_value && !unknown_key {
            out.check_settings(&raw, errors);
        }
        if !unknown_key {
            stale_needs_stale_for(&seen, errors);
            max_keys_needs_key(&seen, errors);
        }
        out
    }

    /// Reads one argument: a settings value into `raw`, any other into its field.
    fn read(
        &mut self,
        arg: &Arg,
        raw: &mut RawSettings,
        seen: &mut HashMap<String, Span>,
    ) -> Result<(), Refused> {
        let key = arg.key.to_string();
        let refused = |error, is_setting| Refused { error, is_setting };
        if !KEYS.contains(&key.as_str()) {
            return Err(refused(checks::unknown(arg, "breaker", KEYS), false));
        }
        if seen.insert(key.clone(), arg.key.span()).is_some() {
            return Err(refused(checks::duplicate(arg), false));
        }
        match Key::from_name(&key).filter(|k| BREAKER_KEYS.contains(&k.name())) {
            Some(k) => {
                self.given.push((k.name(), arg.key.span()));
                checks::set_setting(arg, k, |k, text| raw.set_text(k, text))
                    .map_err(|e| refused(e, true))
            }
            None => self.set(&key, arg).map_err(|e| refused(e, false)),
        }
    }

    /// The rules between keys, judged by `fusebox-settings` and blamed on the last key named.
    fn check_settings(&mut self, raw: &RawSettings, errors: &mut Errors) {
        match raw.check() {
            Ok(s) => self.settings = s,
            Err(e) => errors.push(checks::config_error(
                checks::blame(&e, &self.given, Span::call_site()),
                &e,
            )),
        }
    }

    fn set(&mut self, key: &str, arg: &Arg) -> syn::Result<()> {
        match key {
            "name" => self.name = Some(checks::name(arg)?),
            "key" => self.key = Some(arg.value.clone()),
            "failure" => self.failure = Some(checks::hook(arg, "fn(&E) -> bool", "is_failure")?),
            "ignore" => self.ignore = Some(checks::hook(arg, "fn(&E) -> bool", "is_ignored")?),
            "failure_if_ok" => {
                self.failure_if_ok = Some(checks::hook(arg, "fn(&T) -> bool", "is_bad")?)
            }
            "fallback" => self.fallback = Some(path_like(arg)?),
            "stale_for" => self.stale_for = Some(checks::duration(arg, "stale_for")?),
            "stale_key" => self.stale_key = Some(arg.value.clone()),
            "stale_capacity" => {
                self.stale_capacity = Some(checks::count(arg, "entries", MAX_STALE_CAPACITY)?)
            }
            "stale_max_bytes" => {
                self.stale_max_bytes = Some(checks::count(arg, "bytes", MAX_STALE_BYTES)?)
            }
            "stale_fallback" => self.stale_fallback = Some(path_like(arg)?),
            "crate" => self.krate = Some(checks::crate_path(arg)?),
            _ => return Err(checks::unknown(arg, "breaker", KEYS)),
        }
        Ok(())
    }
}

/// An argument refused, and whether it was a settings value (then the rules between keys
/// are not judged: one mistake, one error).
struct Refused {
    error: syn::Error,
    is_setting: bool,
}

/// `max_keys` bounds a keyed breaker only.
fn max_keys_needs_key(seen: &HashMap<String, Span>, errors: &mut Errors) {
    if let (Some(span), None) = (seen.get("max_keys"), seen.get("key")) {
        errors.at(
            *span,
            "`max_keys` needs `key` too: it bounds how many keys get a breaker of their own; add `key = expr`",
        );
    }
}

/// The `stale_*` arguments only mean something with `stale_for` (not a setting: the
/// runtime's breaker never sees it).
fn stale_needs_stale_for(seen: &HashMap<String, Span>, errors: &mut Errors) {
    if seen.contains_key("stale_for") {
        return;
    }
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
        if let Some(span) = seen.get(key) {
            errors.at(
                *span,
                format!("`{key}` needs `stale_for` too: {hint}, and those are kept only with `stale_for = \"10m\"` (how old a value may be served)"),
            );
        }
    }
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
