//! Attribute macros of fusebox: `#[breaker(...)]` and `#[bulkhead(...)]`.
//!
//! Use them through the `fusebox` crate: the generated code names `::fusebox::__private` only.
//! Each attribute parses its arguments (`args`), reads them into a settings struct
//! (`breaker_args`, `bulkhead_args`; every settings value and cross-key rule is judged by
//! `fusebox-settings`, the runtime's own table), checks the function (here), and only then
//! expands (`expand`, with `emit` for the settings and `tokens` for shared token builders).
//! Any error keeps the original function in the output, so one mistake gives one error and
//! IDEs still see the function.
#![forbid(unsafe_code)]

extern crate proc_macro;

mod args;
mod breaker_args;
mod bulkhead_args;
mod checks;
mod emit;
mod expand;
mod fallback;
mod shape;
mod signature;
mod stale;
mod tokens;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::{Attribute, ItemFn, Meta};

use crate::args::Errors;
use crate::breaker_args::BreakerArgs;
use crate::bulkhead_args::BulkheadArgs;

// The reference (every argument, its default, its rules, examples) is a markdown file, shown
// here and through `fusebox::breaker`; its examples need `fusebox`, so they run as doc tests of
// the facade (its `attribute_reference` item), not of this crate.
#[cfg_attr(not(doctest), doc = include_str!("../docs/breaker.md"))]
#[proc_macro_attribute]
pub fn breaker(
    attr: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    entry(Kind::Breaker, attr.into(), item.into()).into()
}

// The reference, as for `breaker`: its examples run as doc tests of the facade.
#[cfg_attr(not(doctest), doc = include_str!("../docs/bulkhead.md"))]
#[proc_macro_attribute]
pub fn bulkhead(
    attr: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    entry(Kind::Bulkhead, attr.into(), item.into()).into()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Breaker,
    Bulkhead,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Breaker => "breaker",
            Kind::Bulkhead => "bulkhead",
        }
    }
}

/// What the outer attribute leaves in place of the inner one it consumed: the inner attribute
/// still expands (so `use fusebox::bulkhead` counts as used) and returns the function as is.
const COMPOSED: &str = "__fusebox_composed";

fn entry(kind: Kind, attr: TokenStream, item: TokenStream) -> TokenStream {
    if is_composed_marker(&attr) {
        return item;
    }
    let mut func: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let e = syn::Error::new(
                Span::call_site(),
                format!(
                    "`#[{}]` goes on an `async fn` with a body: a free function or a method in an `impl` block",
                    kind.name()
                ),
            )
            .to_compile_error();
            return quote!(#e #item);
        }
    };
    let mut errors = Errors::default();

    // Arguments of this attribute, and of the other one if it is also on the function: the
    // outer attribute consumes the inner so both compose into one wrapper, in one fixed order.
    let mut breaker_tokens = None;
    let mut bulkhead_tokens = None;
    match kind {
        Kind::Breaker => breaker_tokens = Some((attr, Span::call_site())),
        Kind::Bulkhead => bulkhead_tokens = Some((attr, Span::call_site())),
    }
    let mut kept = Vec::with_capacity(func.attrs.len());
    for a in std::mem::take(&mut func.attrs) {
        let Some(found) = fusebox_attr(&a) else {
            kept.push(a);
            continue;
        };
        let slot = match found {
            Kind::Breaker => &mut breaker_tokens,
            Kind::Bulkhead => &mut bulkhead_tokens,
        };
        if slot.is_some() {
            errors.push(syn::Error::new_spanned(
                &a.meta,
                format!(
                    "`#[{0}]` is given twice on this function; merge the arguments into one `#[{0}(...)]`",
                    found.name()
                ),
            ));
            continue;
        }
        if found != kind {
            let path = a.path();
            let marker = syn::Ident::new(COMPOSED, Span::call_site());
            kept.push(syn::parse_quote!(#[#path(#marker)]));
        }
        match &a.meta {
            Meta::Path(p) => *slot = Some((TokenStream::new(), p.span())),
            Meta::List(l) => *slot = Some((l.tokens.clone(), l.path.span())),
            Meta::NameValue(nv) => errors.push(syn::Error::new_spanned(
                nv,
                format!("write `#[{}(key = value, ...)]`", found.name()),
            )),
        }
    }
    func.attrs = kept;

    let breaker = breaker_tokens.map(|(tokens, _)| {
        let list = args::parse(tokens, "breaker").unwrap_or_else(|e| {
            errors.push(e);
            Vec::new()
        });
        BreakerArgs::from_args(&list, &mut errors)
    });
    let bulkhead = bulkhead_tokens.map(|(tokens, span)| {
        let list = args::parse(tokens, "bulkhead").unwrap_or_else(|e| {
            errors.push(e);
            Vec::new()
        });
        BulkheadArgs::from_args(&list, span, &mut errors)
    });

    let Some(shape) = shape::read(&func) else {
        // Not a future: the one error says so, and nothing about the return type follows.
        errors.at(
            func.sig.fn_token.span,
            format!(
                "`#[{}]` goes on an `async fn` (also in an `#[async_trait]` impl): it admits, times and \
                 limits a future; write `async fn {}(...)`",
                kind.name(),
                func.sig.ident
            ),
        );
        let errs = errors.to_compile_errors();
        return quote!(#errs #func);
    };
    let out = signature::output(&func, &shape);
    check_function(&func, &out, breaker.as_ref(), &mut errors);

    if !errors.is_empty() {
        let errs = errors.to_compile_errors();
        return quote!(#errs #func);
    }
    expand::expand(&func, &shape, &out, breaker.as_ref(), bulkhead.as_ref())
}

fn is_composed_marker(attr: &TokenStream) -> bool {
    let mut tokens = attr.clone().into_iter();
    matches!(
        (tokens.next(), tokens.next()),
        (Some(proc_macro2::TokenTree::Ident(i)), None) if i == COMPOSED
    )
}

/// Which fusebox attribute `a` is, by its last path segment (`bulkhead`, `fusebox::bulkhead`).
fn fusebox_attr(a: &Attribute) -> Option<Kind> {
    let last = a.path().segments.last()?;
    match last.ident.to_string().as_str() {
        "breaker" => Some(Kind::Breaker),
        "bulkhead" => Some(Kind::Bulkhead),
        _ => None,
    }
}

/// The function-level rules, once the function is known to be a future: a return type that
/// can carry a rejection, and arguments the stale key can name.
fn check_function(
    func: &ItemFn,
    out: &signature::Output,
    breaker: Option<&BreakerArgs>,
    errors: &mut Errors,
) {
    let fallback = breaker.and_then(|b| b.fallback.as_ref()).is_some();
    if !out.is_result && !fallback {
        let ty = &out.shown;
        let msg = match breaker {
            Some(_) => format!(
                "`#[breaker]` without `fallback` needs a `Result` return type, and this function returns `{ty}`: \
                 a rejected or timed-out call must return something. Return `Result<{ty}, E>` with \
                 `E: From<fusebox::Rejection>`, or add `fallback = path` to answer with a `{ty}`"
            ),
            None => format!(
                "`#[bulkhead]` needs a `Result` return type, and this function returns `{ty}`: a call refused \
                 by a full pool returns `Err(E::from(fusebox::Rejection))`. Return `Result<{ty}, E>`, or add \
                 `#[breaker(fallback = path)]` to answer with a `{ty}`"
            ),
        };
        errors.at(out.span, msg);
    }
    if breaker.is_some_and(|b| b.stale_for.is_some() && b.stale_key.is_none()) {
        stale::check_arguments(func, errors);
    }
    if let Some(b) = breaker.filter(|b| b.stale_for.is_some()) {
        stale::check_receiver(func, b, errors);
    }
    if let Some(f) = breaker.and_then(|b| b.failure.as_ref()) {
        if !out.is_result {
            errors.at(
                f.span(),
                format!(
                    "`failure` decides which `Err` values count, but this function returns `{}`, not a `Result`",
                    out.shown
                ),
            );
        }
    }
}

#[cfg(test)]
mod expansion_tests;
#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod settings_tests;
