//! `#[retry(...)]` arguments: the settings (`attempts`, `backoff`, `backoff_max`, `budget`,
//! `budget_floor`, `budget_window`, `total`) are judged by `fusebox-settings`' table, the
//! check `Retry::builder` runs, so what compiles builds and each message is the table's; the
//! others (`retry_on`, `retry_after`, `idempotent`, `hold_open`, `crate`) are code, flags and
//! a path.

use fusebox_settings::{Key, RawRetrySettings, RetrySettings, RETRY_KEYS};
use proc_macro2::Span;
use syn::Expr;

use crate::args::{Arg, Errors};
use crate::checks;

/// The arguments of `#[retry]` that are not settings.
const NOT_SETTINGS: [&str; 5] = [
    "retry_on",
    "retry_after",
    "idempotent",
    "hold_open",
    "crate",
];

/// Every key `#[retry]` accepts: the settings as `fusebox-settings` lists them (not written
/// again here), then the other arguments.
pub const KEYS: &[&str] = &{
    let mut all = [""; RETRY_KEYS.len() + NOT_SETTINGS.len()];
    let mut i = 0;
    while i < all.len() {
        all[i] = if i < RETRY_KEYS.len() {
            RETRY_KEYS[i]
        } else {
            NOT_SETTINGS[i - RETRY_KEYS.len()]
        };
        i += 1;
    }
    all
};

/// Validated `#[retry]` arguments.
#[derive(Default)]
pub struct RetryArgs {
    /// The checked settings; `None` when one was refused (nothing expands then).
    pub settings: Option<RetrySettings>,
    /// The settings keys given, so only those are passed on (the rest are the runtime's
    /// defaults, the same constants).
    pub given: Vec<&'static str>,
    pub retry_on: Option<Expr>,
    pub retry_after: Option<Expr>,
    pub idempotent: bool,
    /// `hold_open = false`: a `retry_after` hint delays this caller only.
    pub no_hold_open: bool,
    pub krate: Option<syn::Path>,
}

impl RetryArgs {
    /// Reads the arguments `args::parse` found; every problem goes to `errors`; `attr_span` is
    /// blamed for a rule between keys when no key of it can be.
    pub fn from_args(list: &[Arg], attr_span: Span, errors: &mut Errors) -> RetryArgs {
        let mut out = RetryArgs::default();
        let mut raw = RawRetrySettings::new();
        let mut bad_value = false;
        // Where each key was given, to spot duplicates and to blame a rule between keys.
        let mut seen: Vec<(&'static str, Span)> = Vec::new();
        for arg in list {
            if let Err((e, is_setting)) = out.read(arg, &mut raw, &mut seen) {
                bad_value |= is_setting;
                errors.push(e);
            }
        }
        // Rules between keys only once every value is good, so one mistake gives one error.
        if !bad_value {
            match raw.check() {
                Ok(s) => out.settings = Some(s),
                Err(e) => errors.push(checks::config_error(
                    checks::blame(&e, &seen, attr_span),
                    &e,
                )),
            }
        }
        out
    }

    /// Reads one argument; a refusal says whether it was a settings value.
    fn read(
        &mut self,
        arg: &Arg,
        raw: &mut RawRetrySettings,
        seen: &mut Vec<(&'static str, Span)>,
    ) -> Result<(), (syn::Error, bool)> {
        let key = arg.key.to_string();
        let Some(&known) = KEYS.iter().find(|k| **k == key) else {
            return Err((checks::unknown(arg, "retry", KEYS), false));
        };
        if seen.iter().any(|(k, _)| *k == known) {
            return Err((checks::duplicate(arg), false));
        }
        seen.push((known, syn::spanned::Spanned::span(&arg.value)));
        if let Some(k) = Key::retry_from_name(known) {
            self.given.push(k.name());
            return checks::set_setting(arg, k, |k, text| raw.set_text(k, text))
                .map_err(|e| (e, true));
        }
        match known {
            "retry_on" => {
                let hook = checks::hook(arg, "fn(&E) -> bool", "is_transient");
                self.retry_on = Some(hook.map_err(|e| (e, false))?);
            }
            "retry_after" => {
                let hook = checks::hook(arg, "fn(&E) -> Option<Duration>", "server_hint");
                self.retry_after = Some(hook.map_err(|e| (e, false))?);
            }
            "idempotent" => self.idempotent = flag(arg).map_err(|e| (e, false))?,
            "hold_open" => self.no_hold_open = !flag(arg).map_err(|e| (e, false))?,
            _ => self.krate = Some(checks::crate_path(arg).map_err(|e| (e, false))?),
        }
        Ok(())
    }

    /// Whether the setting `key` was written.
    pub fn gave(&self, key: &str) -> bool {
        self.given.contains(&key)
    }
}

/// A flag: `idempotent` alone, or `key = true/false`.
fn flag(arg: &Arg) -> syn::Result<bool> {
    match &arg.value {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(b),
            ..
        }) => Ok(b.value),
        other => Err(syn::Error::new_spanned(
            other,
            format!(
                "`{0}` is a flag: write `{0}` (or `{0} = true`, `{0} = false`)",
                arg.key
            ),
        )),
    }
}
