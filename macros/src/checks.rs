//! Value checks shared by both attributes: each returns the value or an error spanned at it.

use std::time::Duration;

use proc_macro2::Span;

use crate::args::{self, Arg};
use crate::duration;

/// A duration string; `zero_ok` says whether `"0ms"` makes sense for this key.
pub fn duration(arg: &Arg, zero_ok: bool) -> syn::Result<Duration> {
    let key = &arg.key;
    let (text, span) = args::str_lit(arg, &format!("a duration string, like `{key} = \"800ms\"`"))
        .map_err(|e| {
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) = &arg.value
            {
                let msg = format!(
                    "`{key}` takes a duration string with a unit: write `{key} = \"{}ms\"` or `\"{}s\"`",
                    i.base10_digits(),
                    i.base10_digits()
                );
                syn::Error::new(i.span(), msg)
            } else {
                e
            }
        })?;
    let d = duration::parse(&text).map_err(|why| {
        syn::Error::new(
            span,
            format!(
                "bad duration {text:?} for `{key}`: {why}; expected {}",
                duration::EXPECTED
            ),
        )
    })?;
    if d.is_zero() && !zero_ok {
        return Err(syn::Error::new(
            span,
            format!("`{key}` must be longer than zero, like \"100ms\""),
        ));
    }
    Ok(d)
}

/// A percentage from 1 to 100.
pub fn percent(arg: &Arg) -> syn::Result<u8> {
    let what = "a percentage: an integer from 1 to 100";
    let (v, span) = args::int_lit(arg, what)?;
    if !(1..=100).contains(&v) {
        return Err(syn::Error::new(
            span,
            format!("`{}` takes {what}, not {v}", arg.key),
        ));
    }
    Ok(v as u8)
}

/// A count of at least 1 and at most `max`.
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

/// A registry name: a non-empty string literal without control characters.
pub fn name(arg: &Arg) -> syn::Result<(String, Span)> {
    let (name, span) = args::str_lit(arg, "a string literal, like `name = \"payments\"`")?;
    if name.is_empty() {
        return Err(syn::Error::new(span, "`name` cannot be empty"));
    }
    if name.chars().any(char::is_control) {
        return Err(syn::Error::new(
            span,
            "`name` cannot contain control characters",
        ));
    }
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
