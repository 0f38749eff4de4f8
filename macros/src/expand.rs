//! Code generation: the user's function with its body wrapped in place.
//!
//! Only validated arguments reach this module; nothing here reports a user error.

use std::time::Duration;

use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::{AttrStyle, Expr, ItemFn};

use crate::breaker_args::{BreakerArgs, Slow};
use crate::bulkhead_args::BulkheadArgs;
use crate::signature::Output;

/// Expands `func` with a breaker, a bulkhead, or both (composed in DESIGN.md's order by `run`).
pub fn expand(
    func: &ItemFn,
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

    let call = call_future(func, out);
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
        Some(fallback) => fallback_call(fallback, &[quote!()], ret, pv),
        None => {
            // Located at the return type (through `identity`, so rustc keeps that location): a
            // missing `From<Rejection>` is reported there.
            let arg = syn::Ident::new("__fusebox_err", Span::mixed_site().located_at(out.span));
            let pv = respan(pv, out.span);
            quote_spanned!(out.span=> #pv::from_error(::core::convert::identity(#arg)))
        }
    };
    let (on_ok, on_failed, stale_setup) =
        match (breaker, breaker.and_then(|b| b.stale_for), &breaker_handle) {
            (Some(b), Some(_), Some(handle)) => {
                let s = crate::stale::expand(func, out, b, handle, pv);
                (s.wrap_ok(on_ok), s.wrap_failed(on_failed), s.setup)
            }
            _ => (on_ok, on_failed, quote!()),
        };

    quote! {
        #(#outer)*
        #vis #sig {
            #(#inner)*
            #breaker_setup
            #bulkhead_setup
            #stale_setup
            let #call_var = #call;
            match #pv::run(#breaker_ref, #bulkhead_ref, #call_var, #failure).await {
                #pv::Completion::Ok(#value) => #on_ok,
                #pv::Completion::Ignored(#err) => #on_ignored,
                #pv::Completion::Failed(#err) => #on_failed,
            }
        }
    }
}

/// A call of a fallback (`fallback`, `stale_fallback`) with `before` arguments ahead of the
/// error, awaited if it is async. The error carries the fallback's location, so a type
/// mismatch points at the path the user wrote.
pub fn fallback_call(
    fallback: &Expr,
    before: &[TokenStream],
    ret: &TokenStream,
    pv: &TokenStream,
) -> TokenStream {
    let span = syn::spanned::Spanned::span(fallback);
    let arg = syn::Ident::new("__fusebox_err", Span::mixed_site().located_at(span));
    let before = before.iter().filter(|t| !t.is_empty());
    let call = match fallback {
        Expr::Path(_) => quote_spanned!(span=> #fallback(#(#before,)* #arg)),
        _ => quote_spanned!(span=> (#fallback)(#(#before,)* #arg)),
    };
    let pv = respan(pv, span);
    quote_spanned! {span=>
        #pv::FallbackReturn::<#ret, _>::into_future(#call).await
    }
}

/// `module::path::fn_name`, computed where the function is.
fn default_name(func: &ItemFn) -> TokenStream {
    let name = func.sig.ident.to_string();
    quote!(::core::concat!(::core::module_path!(), "::", #name))
}

/// The user's body as a future of a `Result`, with a fake return edge (as tracing's
/// `#[instrument]` does) so `?`, `return` and type errors all see the declared return type.
fn call_future(func: &ItemFn, out: &Output) -> TokenStream {
    let ret = &out.ty;
    let block = &func.block;
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
    let settings = breaker_settings(b);
    let builder = quote!(#pv::Breaker::builder(NAME) #settings);
    let config = quote!(#pv::breaker_config(#builder.config(), NAME));
    match &b.key {
        None => (
            quote! {
                let #var = {
                    const NAME: &str = #name;
                    static CELL: #pv::OnceCell<#pv::Breaker> =
                        #pv::OnceCell::new();
                    #pv::static_breaker(&CELL, || #config)
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

/// The builder calls for every argument the user gave; defaults stay the runtime's.
fn breaker_settings(b: &BreakerArgs) -> TokenStream {
    let pct = |v: Option<u8>| v.map(|v| Literal::u8_unsuffixed(v).into_token_stream());
    let count = |n: Option<u32>| n.map(|n| Literal::u32_unsuffixed(n).into_token_stream());
    let time = |d: Option<Duration>| d.map(duration);
    let slow = b.slow.map(|slow| match slow {
        Slow::Percentile(p, d) => (format!("trip_p{p}"), duration(d)),
        Slow::Bound(d) => {
            let rate = Literal::u8_unsuffixed(b.slow_rate.unwrap_or(100));
            let d = duration(d);
            ("slow".to_owned(), quote!(#d, #rate))
        }
    });
    let backoff = match (b.backoff, b.open_for_max) {
        (Some(f), Some(max)) => {
            let (f, max) = (Literal::f64_unsuffixed(f), duration(max));
            Some(quote!(#f, #max))
        }
        _ => None,
    };
    // In the order of the builder's setters, so expansions read like the docs.
    let calls = [
        ("failure_rate".to_owned(), pct(b.failure_rate)),
        ("window".to_owned(), time(b.window)),
        ("window_calls".to_owned(), count(b.window_calls)),
        ("min_calls".to_owned(), count(b.min_calls)),
    ]
    .into_iter()
    .chain(slow.map(|(setter, args)| (setter, Some(args))))
    .chain([
        ("timeout".to_owned(), time(b.timeout)),
        ("half_open_timeout".to_owned(), time(b.half_open_timeout)),
        ("open_for".to_owned(), time(b.open_for)),
        ("backoff".to_owned(), backoff),
        ("half_open_pct".to_owned(), pct(b.half_open_pct)),
        ("half_open_window".to_owned(), time(b.half_open_window)),
        ("half_open_calls".to_owned(), count(b.half_open_calls)),
        ("alert_after".to_owned(), time(b.alert_after)),
        ("max_keys".to_owned(), count(b.max_keys)),
    ]);
    calls
        .filter_map(|(setter, args)| {
            let setter = format_ident!("{}", setter);
            args.map(|args| quote!(.#setter(#args)))
        })
        .collect()
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
    let pool = Literal::u64_unsuffixed(b.pool);
    let max_wait = if b.max_wait.is_zero() {
        quote!()
    } else {
        let d = duration(b.max_wait);
        quote!(.max_wait(#d))
    };
    (
        quote! {
            let #var = {
                const NAME: &str = #name;
                static CELL: #pv::OnceCell<#pv::Bulkhead> =
                    #pv::OnceCell::new();
                #pv::static_bulkhead(&CELL, || {
                    #pv::bulkhead_config(
                        #pv::Bulkhead::builder(NAME).pool(#pool) #max_wait .config(),
                        NAME,
                    )
                })
            };
        },
        quote!(::core::option::Option::Some(&*#var)),
    )
}

/// A `Duration` constructor in the largest unit that is exact, so the expansion reads well.
pub fn duration(d: Duration) -> TokenStream {
    let nanos = d.as_nanos() as u64;
    if nanos % 1_000_000_000 == 0 {
        let v = Literal::u64_unsuffixed(nanos / 1_000_000_000);
        quote!(::core::time::Duration::from_secs(#v))
    } else if nanos % 1_000_000 == 0 {
        let v = Literal::u64_unsuffixed(nanos / 1_000_000);
        quote!(::core::time::Duration::from_millis(#v))
    } else if nanos % 1_000 == 0 {
        let v = Literal::u64_unsuffixed(nanos / 1_000);
        quote!(::core::time::Duration::from_micros(#v))
    } else {
        let v = Literal::u64_unsuffixed(nanos);
        quote!(::core::time::Duration::from_nanos(#v))
    }
}

/// `tokens` with every token at `span`, so an error in a generated path points where the
/// surrounding `quote_spanned!` does.
pub fn respan(tokens: &TokenStream, span: Span) -> TokenStream {
    tokens
        .clone()
        .into_iter()
        .map(|mut t| {
            if let proc_macro2::TokenTree::Group(g) = &t {
                let mut g2 = proc_macro2::Group::new(g.delimiter(), respan(&g.stream(), span));
                g2.set_span(span);
                t = proc_macro2::TokenTree::Group(g2);
            } else {
                t.set_span(span);
            }
            t
        })
        .collect()
}
