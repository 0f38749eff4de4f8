//! Token checks shared by both attributes: each returns the value or an error spanned at it.
//!
//! Settings values are not judged here: [`setting`] only checks the literal's shape and hands
//! its text to `fusebox-settings`, whose verdict and message are the runtime's.

use std::time::Duration;

use fusebox_settings::{check_name, parse_duration, ConfigError, Key, Kind};
use proc_macro2::Span;
use syn::{Expr, ExprLit, ExprUnary, Lit, UnOp};

use crate::args::{self, Arg};

/// The text of a setting's literal, as a settings file would hold it (`"800ms"` → `800ms`,
/// `1_000` → `1000`, `-1` → `-1`), with the literal's span; a literal of the wrong shape is
/// an error saying what the key takes.
pub fn setting(arg: &Arg, key: Key) -> syn::Result<(String, Span)> {
    let name = key.name();
    let wrong = |span| {
        let what = match key.kind() {
            Kind::Duration { .. } | Kind::Span { .. } => {
                format!("a duration string, like `{name} = \"800ms\"`")
            }
            Kind::Factor => format!("{}, like `{name} = 2.0`", key.expected()),
            Kind::Percent | Kind::Count { .. } | Kind::Upto { .. } => key.expected().to_owned(),
            Kind::Word { .. } => format!("a string, {}", key.expected()),
        };
        syn::Error::new(span, format!("`{name}` takes {what}"))
    };
    let (lit, neg) = match &arg.value {
        Expr::Lit(ExprLit { lit, .. }) => (lit, ""),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            Expr::Lit(ExprLit { lit, .. }) => (lit, "-"),
            other => return Err(wrong(syn::spanned::Spanned::span(other))),
        },
        other => return Err(wrong(syn::spanned::Spanned::span(other))),
    };
    let span = syn::spanned::Spanned::span(&arg.value);
    match (key.kind(), lit) {
        (Kind::Duration { .. } | Kind::Span { .. } | Kind::Word { .. }, Lit::Str(s)) => {
            Ok((s.value(), s.span()))
        }
        (Kind::Duration { .. }, Lit::Int(i)) => Err(syn::Error::new(
            i.span(),
            format!(
                "`{name}` takes a duration string with a unit: write `{name} = \"{0}ms\"` or `\"{0}s\"`",
                i.base10_digits()
            ),
        )),
        (Kind::Percent | Kind::Count { .. } | Kind::Upto { .. }, Lit::Int(i)) => {
            Ok((format!("{neg}{}", i.base10_digits()), span))
        }
        // A fraction for a whole number: the settings table refuses its text in its words.
        (Kind::Percent | Kind::Count { .. } | Kind::Upto { .. }, Lit::Float(f)) => {
            Ok((format!("{neg}{}", f.base10_digits()), span))
        }
        (Kind::Factor, Lit::Int(i)) => Ok((format!("{neg}{}", i.base10_digits()), span)),
        (Kind::Factor, Lit::Float(f)) => Ok((format!("{neg}{}", f.base10_digits()), span)),
        _ => Err(wrong(span)),
    }
}

/// Reads a settings value of `arg` and hands its text to `set` (`RawSettings::set_text` or the
/// bulkhead's), whose refusal is spanned at the literal.
pub fn set_setting(
    arg: &Arg,
    key: Key,
    mut set: impl FnMut(&str, &str) -> Result<(), ConfigError>,
) -> syn::Result<()> {
    let (text, span) = setting(arg, key)?;
    set(key.name(), &text).map_err(|e| match &arg.value {
        // `-1`: the whole literal, sign included (one token's span would be the sign alone).
        Expr::Unary(u) => syn::Error::new_spanned(u, e.to_string()),
        _ => config_error(span, &e),
    })
}

/// A `ConfigError` as a compile error at `span`: the message is the runtime's, word for word.
pub fn config_error(span: Span, e: &ConfigError) -> syn::Error {
    syn::Error::new(span, e.to_string())
}

/// A duration string of an argument that is not a setting (`stale_for`), parsed and judged
/// like the settings' durations.
pub fn duration(arg: &Arg, field: &'static str) -> syn::Result<Duration> {
    let key = &arg.key;
    let (text, span) = args::str_lit(arg, &format!("a duration string, like `{key} = \"10m\"`"))?;
    let d = parse_duration(&text).map_err(|e| config_error(span, &e))?;
    if d.is_zero() {
        return Err(config_error(span, &ConfigError::ZeroDuration { field }));
    }
    Ok(d)
}

/// A count of at least 1 and at most `max`, for arguments that are not settings.
pub fn count(arg: &Arg, noun: &str, max: u64) -> syn::Result<u64> {
    let what = format!("a number of {noun}: an integer from 1 to {max}");
    let (v, span) = args::int_lit(arg, &what)?;
    if !(1..=max).contains(&v) {
        return Err(syn::Error::new(
            span,
            format!("`{}` takes {what}, not {v}", arg.key),
        ));
    }
    Ok(v)
}

/// A registry name: a string literal the runtime accepts as a name.
pub fn name(arg: &Arg) -> syn::Result<(String, Span)> {
    let (name, span) = args::str_lit(arg, "a string literal, like `name = \"payments\"`")?;
    check_name(&name).map_err(|e| config_error(span, &e))?;
    Ok((name, span))
}

/// Unknown-key error listing every valid key (and the likely intended one).
pub fn unknown(arg: &Arg, attr: &str, valid: &[&str]) -> syn::Error {
    let key = arg.key.to_string();
    let hint = match args::suggest(&key, valid) {
        Some(s) => format!(" (did you mean `{s}`?)"),
        None => String::new(),
    };
    syn::Error::new(
        arg.key.span(),
        format!(
            "unknown argument `{key}` of `#[{attr}]`{hint}; valid arguments are: {}",
            valid.join(", ")
        ),
    )
}

/// Duplicate-key error at the second occurrence.
pub fn duplicate(arg: &Arg) -> syn::Error {
    syn::Error::new(
        arg.key.span(),
        format!("duplicate argument `{}`: give it once", arg.key),
    )
}

/// `crate = "path"` (or a bare path): where the generated code finds fusebox, for crates that
/// re-export it.
pub fn crate_path(arg: &Arg) -> syn::Result<syn::Path> {
    let what =
        "the path of the fusebox crate as re-exported, like `crate = \"my_platform::fusebox\"`";
    match &arg.value {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => s
            .parse::<syn::Path>()
            .map_err(|_| syn::Error::new(s.span(), format!("`crate` takes {what}"))),
        syn::Expr::Path(p) if p.qself.is_none() => Ok(p.path.clone()),
        other => Err(syn::Error::new_spanned(
            other,
            format!("`crate` takes {what}"),
        )),
    }
}

/// Where a cross-key error points: the last key it names that the user wrote, or `fallback`
/// (the attribute) when it names none of them, like a missing `pool`.
pub fn blame(e: &ConfigError, given: &[(&'static str, Span)], fallback: Span) -> Span {
    let keys = e.keys();
    given
        .iter()
        .rev()
        .find(|(k, _)| keys.contains(k))
        .map_or(fallback, |(_, span)| *span)
}

/// A hook named by a function (`failure`, `ignore`, `failure_if_ok`, `retry_on`,
/// `retry_after`): a literal there (`failure = "is_failure"`) gets this message rather than a
/// bare type mismatch. Any other expression is left to the type checker, which names the
/// signature (a call may return the function).
pub fn hook(arg: &Arg, signature: &str, example: &str) -> syn::Result<Expr> {
    match &arg.value {
        Expr::Lit(lit) => Err(syn::Error::new_spanned(
            lit,
            format!(
                "`{0}` takes a function `{signature}` by its path, not in quotes, like `{0} = {example}`",
                arg.key
            ),
        )),
        other => Ok(other.clone()),
    }
}
