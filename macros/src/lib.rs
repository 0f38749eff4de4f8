//! Attribute macros of fusebox: `#[breaker(...)]`, `#[bulkhead(...)]` and `#[retry(...)]`.
//!
//! Use them through the `fusebox` crate: the generated code names `::fusebox::__private` only.
//! Each attribute runs three phases, each in its own module, each using only the ones before
//! (`phases_tests` fails on a module that names one above it):
//!
//! 1. **parse**: `ast` reads the item as a function whose body stays tokens; `attr` takes the
//!    fusebox attributes off it (composing `#[breaker]`, `#[bulkhead]` and `#[retry]` into one
//!    wrapper) and reads their arguments (`args`, then `breaker_args` / `bulkhead_args` /
//!    `retry_args` with `checks`;
//!    every settings value and cross-key rule is judged by `fusebox-settings`, the runtime's
//!    own table);
//! 2. **validate**: `valid` checks the function (`shape`: a future; `signature`: a return type
//!    that can carry a rejection; the arguments `stale_for` keys by; `retry_checks`: arguments
//!    a retry can rebind per attempt);
//! 3. **expand**: `expand` wraps the body in place (`setup` for the static handles, `emit` for
//!    the settings constant, `stale`, `fallback`, `retry_expand` for the attempt loop, and
//!    `tokens` for shared token builders).
//!
//! Any error keeps the original function in the output, so one mistake gives one error and
//! IDEs still see the function.
#![forbid(unsafe_code)]

extern crate proc_macro;

mod args;
mod ast;
mod attr;
mod breaker_args;
mod bulkhead_args;
mod checks;
mod emit;
mod expand;
mod fallback;
mod retry_args;
mod retry_checks;
mod retry_expand;
mod setup;
mod shape;
mod signature;
mod stale;
mod tokens;
mod valid;

use proc_macro2::{Span, TokenStream};
use quote::quote;

use crate::args::Errors;
use crate::ast::Function;
use crate::attr::{Attrs, Kind};

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

// The reference, as for `breaker`: its examples run as doc tests of the facade.
#[cfg_attr(not(doctest), doc = include_str!("../docs/retry.md"))]
#[proc_macro_attribute]
pub fn retry(
    attr: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    entry(Kind::Retry, attr.into(), item.into()).into()
}

/// The three phases, composed: parse, validate, expand.
fn entry(kind: Kind, attr: TokenStream, item: TokenStream) -> TokenStream {
    if attr::is_composed_marker(&attr) {
        return item;
    }
    let Ok(mut func) = syn::parse2::<Function>(item.clone()) else {
        return not_a_function(kind, item);
    };
    let mut errors = Errors::default();
    let attrs = Attrs::take(kind, attr, &mut func, &mut errors);
    let args = attrs.parse(&mut errors);
    match valid::validate(kind, &func, args, errors) {
        Ok(valid) => expand::expand(&valid),
        Err(errors) => {
            let errors = errors.to_compile_errors();
            quote!(#errors #func)
        }
    }
}

/// Not a function with a body at all (a struct, a bodiless trait method): one error, and the
/// item as it was.
fn not_a_function(kind: Kind, item: TokenStream) -> TokenStream {
    let e = syn::Error::new(
        Span::call_site(),
        format!(
            "`#[{}]` goes on an `async fn` with a body: a free function or a method in an `impl` block",
            kind.name()
        ),
    )
    .to_compile_error();
    quote!(#e #item)
}

#[cfg(test)]
mod expansion_tests;
#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod phases_tests;
#[cfg(test)]
mod settings_tests;
