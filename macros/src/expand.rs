//! Code generation: the user's function with its body wrapped in place.
//!
//! Only validated arguments reach this module; nothing here reports a user error.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{AttrStyle, ItemFn};

use crate::breaker_args::BreakerArgs;
use crate::bulkhead_args::BulkheadArgs;
use crate::shape::Shape;
use crate::signature::Output;
use crate::tokens::respan;

/// Expands `func` with a breaker, a bulkhead, or both (composed in DESIGN.md's order by `run`).
pub fn expand(
    func: &ItemFn,
    shape: &Shape<'_>,
    out: &Output,
    breaker: Option<&BreakerArgs>,
    bulkhead: Option<&BulkheadArgs>,
) -> TokenStream {
    // Every generated path goes through the facade's hidden module (or a re-export's).
    let krate = breaker
        .and_then(|b| b.krate.as_ref())
        .or_else(|| bulkhead.and_then(|b| b.krate.as_ref()));
    let pv = match krate {
        Some(k) => quote!(#k::__private),
        None => quote!(::fusebox::__private),
    };
    let pv = &pv;
    let (outer, inner): (Vec<_>, Vec<_>) = func
        .attrs
        .iter()
        .partition(|a| matches!(a.style, AttrStyle::Outer));
    let vis = &func.vis;
    let sig = &func.sig;
    let default_name = default_name(func);

    // Mixed-site names: the user's body cannot see or shadow them.
    let breaker_var = format_ident!("__fusebox_breaker", span = Span::mixed_site());
    let bulkhead_var = format_ident!("__fusebox_bulkhead", span = Span::mixed_site());
    let call_var = format_ident!("__fusebox_call", span = Span::mixed_site());
    let value = format_ident!("__fusebox_value", span = Span::mixed_site());
    let err = format_ident!("__fusebox_err", span = Span::mixed_site());

    let (breaker_setup, breaker_handle) = match breaker {
        Some(b) => {
            let (setup, handle) = breaker_setup(b, &default_name, &breaker_var, pv);
            (setup, Some(handle))
        }
        None => (quote!(), None),
    };
    let breaker_ref = match &breaker_handle {
        Some(h) => quote!(::core::option::Option::Some(#h)),
        None => quote!(::core::option::Option::None),
    };
    let (bulkhead_setup, bulkhead_ref) = match bulkhead {
        Some(b) => bulkhead_setup(b, &default_name, &bulkhead_var, pv),
        None => (quote!(), quote!(::core::option::Option::None)),
    };

    let call = call_future(shape.body(func), out);
    let failure = match breaker.and_then(|b| b.failure.as_ref()) {
        // A fn pointer: a wrong signature is one type error at the path, not one per use.
        Some(f) => {
            let span = syn::spanned::Spanned::span(f);
            quote_spanned!(span=> {
                let __fusebox_failure: fn(&_) -> bool = #f;
                __fusebox_failure
            })
        }
        None => quote!(|_| true),
    };
    let ret = &out.ty;
    let (on_ok, on_ignored) = if out.is_result {
        (
            quote!(::core::result::Result::Ok(#value)),
            quote!(::core::result::Result::Err(#err)),
        )
    } else {
        (quote!(#value), quote!(match #err {}))
    };
    let on_failed = match breaker.and_then(|b| b.fallback.as_ref()) {
        Some(fallback) => crate::fallback::call(func, fallback, ret, pv),
        None => {
            // Located at the return type (through `identity`, so rustc keeps that location): a
            // missing `From<Rejection>` is reported there.
            let arg = syn::Ident::new("__fusebox_err", Span::mixed_site().located_at(out.span));
            let pv = respan(pv, out.span);
            quote_spanned!(out.span=> #pv::from_error(::core::convert::identity(#arg)))
        }
    };
    // A bulkhead alone takes its own, smaller call future: no breaker timer state to move.
    let run = match breaker {
        Some(_) => quote!(#pv::run(#breaker_ref, #bulkhead_ref, #call_var, #failure)),
        None => quote!(#pv::run_bulkhead(#bulkhead_ref, #call_var)),
    };
    let (on_ok, on_failed, stale_setup) =
        match (breaker, breaker.and_then(|b| b.stale_for), &breaker_handle) {
            (Some(b), Some(_), Some(handle)) => {
                let s = crate::stale::expand(func, out, b, handle, pv);
                (s.wrap_ok(on_ok), s.wrap_failed(on_failed), s.setup)
            }
            _ => (on_ok, on_failed, quote!()),
        };

    let wrapped = quote! {
        #breaker_setup
        #bulkhead_setup
        #stale_setup
        let #call_var = #call;
        match #run.await {
            #pv::Completion::Ok(#value) => #on_ok,
            #pv::Completion::Ignored(#err) => #on_ignored,
            #pv::Completion::Failed(#err) => #on_failed,
        }
    };
    let body = match shape {
        Shape::Async => wrapped,
        // async-trait's shape: the boxed async block is wrapped, so the boxed future (and a
        // call through `dyn Trait`) goes through the breaker.
        Shape::Boxed(b) => {
            let (before, pin, attrs, capture) = (b.before, b.pin, b.attrs, b.capture);
            quote! {
                #(#before)*
                #pin(#(#attrs)* async #capture { #wrapped })
            }
        }
    };
    quote! {
        #(#outer)*
        #vis #sig {
            #(#inner)*
            #body
        }
    }
}

/// `module::path::fn_name`, computed where the function is.
fn default_name(func: &ItemFn) -> TokenStream {
    let name = func.sig.ident.to_string();
    quote!(::core::concat!(::core::module_path!(), "::", #name))
}

/// The user's body as a future of a `Result`, with a fake return edge (as tracing's
/// `#[instrument]` does) so `?`, `return` and type errors all see the declared return type.
/// The statements are spliced, not the block: a block of one expression in tail position
/// would make rustc warn "unnecessary braces" at the user's braces.
fn call_future(body: &[syn::Stmt], out: &Output) -> TokenStream {
    let ret = &out.ty;
    let block = quote!(#(#body)*);
    let edge = quote_spanned! {out.span=>
        #[allow(
            unknown_lints,
            unreachable_code,
            clippy::diverging_sub_expression,
            clippy::empty_loop,
            clippy::let_unit_value,
            clippy::let_with_type_underscore,
            clippy::needless_return,
            clippy::unreachable
        )]
        if false {
            let __fusebox_fake_return: #ret = loop {};
            return __fusebox_fake_return;
        }
    };
    if out.is_result {
        quote!(async move { #edge #block })
    } else {
        // Not a `Result`: the body cannot fail, only be rejected, time out or panic.
        quote! {
            async move {
                ::core::result::Result::Ok::<#ret, ::core::convert::Infallible>(
                    async move { #edge #block }.await
                )
            }
        }
    }
}

fn breaker_setup(
    b: &BreakerArgs,
    default_name: &TokenStream,
    var: &syn::Ident,
    pv: &TokenStream,
) -> (TokenStream, TokenStream) {
    let name = match &b.name {
        Some((n, _)) => quote!(#n),
        None => default_name.clone(),
    };
    let settings = crate::emit::breaker_settings(&b.settings, pv);
    let config = quote!(#pv::BreakerConfig::from_settings(NAME, SETTINGS));
    match &b.key {
        None => (
            quote! {
                let #var = {
                    const NAME: &str = #name;
                    const SETTINGS: #pv::Settings = #settings;
                    fn config() -> #pv::BreakerConfig {
                        #config
                    }
                    // Listed in the registry from the start, before the first call.
                    #[#pv::linkme::distributed_slice(#pv::BREAKER_SITES)]
                    #[linkme(crate = #pv::linkme)]
                    static SITE: #pv::BreakerSite = #pv::BreakerSite { name: NAME, config };
                    static CELL: #pv::OnceCell<#pv::Breaker> =
                        #pv::OnceCell::new();
                    #pv::static_breaker(&CELL, config)
                };
            },
            quote!(&*#var),
        ),
        Some(key) => {
            let key_span = syn::spanned::Spanned::span(key);
            // Evaluated before our block, so the user's expression cannot see the items in it.
            let key_var = format_ident!("__fusebox_key", span = Span::mixed_site());
            // Used at the key's location (through `identity`, which rustc reports at its
            // argument), so a key that is not `Display` is reported at the key.
            let key_use = syn::Ident::new("__fusebox_key", Span::mixed_site().located_at(key_span));
            let key_use = quote_spanned!(key_span=> ::core::convert::identity(#key_use));
            let key_ref = quote_spanned!(key_span=> &(#key));
            (
                quote! {
                    let #key_var = #key_ref;
                    let #var = {
                        const NAME: &str = #name;
                        const SETTINGS: #pv::Settings = #settings;
                        static TEMPLATE: #pv::OnceCell<
                            #pv::BreakerConfig,
                        > = #pv::OnceCell::new();
                        #pv::keyed_breaker(&TEMPLATE, || #config, #key_use)
                    };
                },
                quote!(&#var),
            )
        }
    }
}

fn bulkhead_setup(
    b: &BulkheadArgs,
    default_name: &TokenStream,
    var: &syn::Ident,
    pv: &TokenStream,
) -> (TokenStream, TokenStream) {
    let name = match &b.name {
        Some((n, _)) => quote!(#n),
        None => default_name.clone(),
    };
    let settings = crate::emit::bulkhead_settings(&b.settings, pv);
    (
        quote! {
            let #var = {
                const NAME: &str = #name;
                const SETTINGS: #pv::BulkheadSettings = #settings;
                fn config() -> #pv::BulkheadConfig {
                    #pv::BulkheadConfig::from_settings(NAME, SETTINGS)
                }
                // Listed in the registry from the start, before the first call.
                #[#pv::linkme::distributed_slice(#pv::BULKHEAD_SITES)]
                #[linkme(crate = #pv::linkme)]
                static SITE: #pv::BulkheadSite = #pv::BulkheadSite { name: NAME, config };
                static CELL: #pv::OnceCell<#pv::Bulkhead> =
                    #pv::OnceCell::new();
                #pv::static_bulkhead(&CELL, config)
            };
        },
        quote!(::core::option::Option::Some(&*#var)),
    )
}
