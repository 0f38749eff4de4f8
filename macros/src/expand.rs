//! Phase 3, expansion: the user's function with its body wrapped in place.
//!
//! Only a [`Valid`] input reaches this module; nothing here reports a user error. The wrapped
//! body is: the breaker's and the bulkhead's static handles (`setup`), the user's body as a
//! future (`call_future`), one `run(..).await`, and a `match` that turns its `Completion` into
//! the function's return value (`Answers`).

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;

use crate::breaker_args::BreakerArgs;
use crate::setup::{self, Handle};
use crate::shape::Shape;
use crate::signature::Output;
use crate::tokens::respan;
use crate::valid::Valid;

/// The names generated code binds. Mixed-site: the user's body cannot see or shadow them.
struct Names {
    breaker: Ident,
    bulkhead: Ident,
    call: Ident,
    value: Ident,
    err: Ident,
}

impl Names {
    fn new() -> Names {
        let name = |n: &str| format_ident!("{}", n, span = Span::mixed_site());
        Names {
            breaker: name("__fusebox_breaker"),
            bulkhead: name("__fusebox_bulkhead"),
            call: name("__fusebox_call"),
            value: name("__fusebox_value"),
            err: name("__fusebox_err"),
        }
    }
}

/// Expands a breaker, a bulkhead, or both (composed in DESIGN.md's order by `run`).
pub fn expand(v: &Valid<'_>) -> TokenStream {
    let pv = quote!(__fusebox_private);
    let import = import_private(v, &pv);
    let names = Names::new();
    let wrapped = wrapped_body(v, &names, &pv);
    v.func
        .with_body(in_shape(&v.shape, quote!(#import #wrapped)))
}

/// The one path to the facade's hidden module (or a re-export's), imported once as `alias`;
/// every other generated path goes through the alias. A crate path that does not resolve is
/// then one error, at this import: rustc binds a failed import to a placeholder and reports
/// none of its uses (nor expands the macros reached through it, `site!`). It points at
/// `crate = "..."` when given, else at the attribute. rustc's words cannot be chosen, but the
/// macro an error comes from is named in its note: the import is written in a local macro
/// whose name says what to do.
fn import_private(v: &Valid<'_>, alias: &TokenStream) -> TokenStream {
    let krate = v.breaker.as_ref().and_then(|b| b.krate.as_ref());
    let krate = krate.or_else(|| v.bulkhead.as_ref().and_then(|b| b.krate.as_ref()));
    let krate = krate.or_else(|| v.retry.as_ref().and_then(|r| r.krate.as_ref()));
    let (path, span) = match krate {
        Some(k) => (quote!(#k), syn::spanned::Spanned::span(k)),
        None => (quote!(::fusebox), Span::call_site()),
    };
    let hint = Ident::new(
        "fusebox_is_not_at_this_path__if_renamed_in_cargo_toml_write_crate_eq_its_name",
        span,
    );
    quote_spanned! {span=>
        macro_rules! #hint {
            () => { use #path::__private as #alias; };
        }
        #hint!();
    }
}

/// The statements that replace the user's: setup, the call, and the answer to each outcome.
fn wrapped_body(v: &Valid<'_>, names: &Names, pv: &TokenStream) -> TokenStream {
    let default_name = default_name(v);
    let breaker = v
        .breaker
        .as_ref()
        .map(|b| setup::breaker(b, &default_name, &names.breaker, pv));
    let bulkhead = v
        .bulkhead
        .as_ref()
        .map(|b| setup::bulkhead(b, &default_name, &names.bulkhead, pv));
    let answers = Answers::new(v, names, breaker.as_ref().map(|b| &b.handle), pv);
    let call = call_future(v.shape.body(v.func), &v.out);
    let guard = alias_guard(&v.out);
    if let Some(r) = &v.retry {
        // The retry loop replaces the single call: `retry_expand` runs each attempt.
        let pieces = crate::retry_expand::Pieces {
            pv,
            name: retry_name(v, &default_name),
            breaker: breaker.as_ref().map(|b| &b.handle),
            bulkhead: bulkhead.as_ref().map(|b| &b.handle),
            classify: classifier(
                v.breaker.as_ref(),
                &failure_predicate(v.breaker.as_ref()),
                pv,
            ),
            failure: failure_predicate(v.breaker.as_ref()),
            call,
            value: &names.value,
            err: &names.err,
            on_ok: answers.on_ok,
            on_ignored: answers.on_ignored,
            on_failed: answers.on_failed,
        };
        let (b, k, stale) = (
            breaker.as_ref().map(|b| &b.setup),
            bulkhead.as_ref().map(|b| &b.setup),
            &answers.setup,
        );
        let retried = crate::retry_expand::wrap(v, r, pieces);
        return quote!(#guard #b #k #stale #retried);
    }
    let run = run_call(v, breaker.as_ref(), bulkhead.as_ref(), names, pv);
    let (breaker, bulkhead) = (breaker.map(|b| b.setup), bulkhead.map(|b| b.setup));
    let (call_var, value, err) = (&names.call, &names.value, &names.err);
    let Answers {
        setup: stale,
        on_ok,
        on_ignored,
        on_failed,
    } = answers;
    quote! {
        #guard
        #breaker
        #bulkhead
        #stale
        let #call_var = #call;
        // The answer is bound, not left as the tail expression: a tail's temporaries (the
        // call's future) drop after the locals in Rust 2021 and before them in 2024, and
        // `rust_2024_compatibility` (`cargo fix --edition`) warned at every attribute.
        let __fusebox_answer = match #run.await {
            #pv::Completion::Ok(#value) => #on_ok,
            #pv::Completion::Ignored(#err) => #on_ignored,
            #pv::Completion::Failed(#err) => #on_failed,
        };
        __fusebox_answer
    }
}

/// `run(breaker, bulkhead, call, is_failure)`, or for a bulkhead alone its own, smaller call
/// future (no breaker timer state to move).
fn run_call(
    v: &Valid<'_>,
    breaker: Option<&Handle>,
    bulkhead: Option<&Handle>,
    names: &Names,
    pv: &TokenStream,
) -> TokenStream {
    let call = &names.call;
    let bulkhead = some_or_none(bulkhead.map(|b| &b.handle));
    match breaker {
        Some(b) => {
            let failure = failure_predicate(v.breaker.as_ref());
            let classify = classifier(v.breaker.as_ref(), &failure, pv);
            match (&b.keyed, classify) {
                (None, None) => {
                    let handle = &b.handle;
                    quote!(#pv::run(#handle, #bulkhead, #call, #failure))
                }
                (None, Some(classify)) => {
                    let handle = &b.handle;
                    quote!(#pv::run_classified(#handle, #bulkhead, #call, #classify))
                }
                (Some(keyed), None) => quote!(#pv::run_keyed(#keyed, #bulkhead, #call, #failure)),
                (Some(keyed), Some(classify)) => {
                    quote!(#pv::run_keyed_classified(#keyed, #bulkhead, #call, #classify))
                }
            }
        }
        None => quote!(#pv::run_bulkhead(#bulkhead, #call)),
    }
}

fn some_or_none(handle: Option<&TokenStream>) -> TokenStream {
    match handle {
        Some(h) => quote!(::core::option::Option::Some(#h)),
        None => quote!(::core::option::Option::None),
    }
}

/// Which `Err` values count as failures: `failure = path` as a fn pointer (so a wrong
/// signature is one type error at the path, not one per use), else all of them.
fn failure_predicate(breaker: Option<&BreakerArgs>) -> TokenStream {
    match breaker.and_then(|b| b.failure.as_ref()) {
        Some(f) => {
            let span = syn::spanned::Spanned::span(f);
            quote_spanned!(span=> {
                let __fusebox_failure: fn(&_) -> bool = #f;
                __fusebox_failure
            })
        }
        None => quote!(|_| true),
    }
}

/// With `ignore` or `failure_if_ok`, the three-way classifier (`Outcome::of`): `ignore`
/// first, then `failure`, and `failure_if_ok` for `Ok` values. Each path is a fn pointer so
/// that a wrong signature is one type error at the path. `None` without either: the plain
/// predicate path is kept (nothing changes for existing users' generated code).
fn classifier(
    breaker: Option<&BreakerArgs>,
    failure: &TokenStream,
    pv: &TokenStream,
) -> Option<TokenStream> {
    let b = breaker?;
    if b.ignore.is_none() && b.failure_if_ok.is_none() {
        return None;
    }
    let pointer = |f: Option<&syn::Expr>, name: proc_macro2::Ident| match f {
        Some(f) => {
            let span = syn::spanned::Spanned::span(f);
            quote_spanned!(span=> {
                let #name: fn(&_) -> bool = #f;
                #name
            })
        }
        None => quote!(|_: &_| false),
    };
    let ignore = pointer(b.ignore.as_ref(), quote::format_ident!("__fusebox_ignore"));
    let if_ok = pointer(
        b.failure_if_ok.as_ref(),
        quote::format_ident!("__fusebox_failure_if_ok"),
    );
    // Inline in the call, so each closure gets its signature from `Outcome::of`.
    let outcome = quote!(#pv::Outcome::of(__fusebox_r, #ignore, #failure, #if_ok));
    if b.stale_for.is_none() || b.failure_if_ok.is_none() {
        return Some(quote!(|__fusebox_r: &_| #outcome));
    }
    // With `stale_for`, an `Ok` counted as a failure is flagged, so it is not kept as the
    // last good value (`stale::Stale::wrap_ok`).
    let flag = crate::stale::ok_failed_flag();
    Some(quote!(|__fusebox_r: &_| {
        let __fusebox_o = #outcome;
        if __fusebox_o == #pv::Outcome::Failure && ::core::result::Result::is_ok(__fusebox_r) {
            #flag.store(true, ::core::sync::atomic::Ordering::Relaxed);
        }
        __fusebox_o
    }))
}

/// The arm of each `Completion`, with the stale cache's setup when there is one.
struct Answers {
    setup: TokenStream,
    on_ok: TokenStream,
    on_ignored: TokenStream,
    on_failed: TokenStream,
}

impl Answers {
    /// `handle` is the `&Breaker` expression, which the stale cache needs.
    fn new(
        v: &Valid<'_>,
        names: &Names,
        handle: Option<&TokenStream>,
        pv: &TokenStream,
    ) -> Answers {
        let (value, err) = (&names.value, &names.err);
        let (on_ok, on_ignored) = if v.out.is_result {
            (
                quote!(::core::result::Result::Ok(#value)),
                quote!(::core::result::Result::Err(#err)),
            )
        } else {
            (quote!(#value), quote!(match #err {}))
        };
        let (keep, on_failed) = on_failed(v, pv);
        let stale = v.breaker.as_ref().filter(|b| b.stale_for.is_some());
        match stale.zip(handle) {
            Some((b, handle)) => {
                let s = crate::stale::expand(&v.func.sig, &v.out, b, handle, pv);
                let setup = &s.setup;
                Answers {
                    on_ok: s.wrap_ok(on_ok),
                    on_failed: s.wrap_failed(on_failed),
                    setup: quote!(#keep #setup),
                    on_ignored,
                }
            }
            None => Answers {
                setup: keep,
                on_ok,
                on_ignored,
                on_failed,
            },
        }
    }
}

/// A rejection or a counted failure: the fallback's answer, or `from_error(err)`; and what
/// the call keeps for the fallback before its body runs.
fn on_failed(v: &Valid<'_>, pv: &TokenStream) -> (TokenStream, TokenStream) {
    let out = &v.out;
    match v.breaker.as_ref().and_then(|b| b.fallback.as_ref()) {
        Some(fallback) => {
            let f = crate::fallback::call(&v.func.sig, fallback, &out.ty, pv, v.retry.is_some());
            (f.keep, f.call)
        }
        None => {
            // Located at the return type (through `identity`, so rustc keeps that location): a
            // missing `From<Rejection>` is reported there.
            let arg = Ident::new("__fusebox_err", Span::mixed_site().located_at(out.span));
            let pv = respan(pv, out.span);
            let call = quote_spanned!(out.span=> #pv::from_error(::core::convert::identity(#arg)));
            (TokenStream::new(), call)
        }
    }
}

/// The wrapped statements where the user's future was: the fn body, or inside async-trait's
/// `Box::pin(async move { .. })`, so the boxed future (and a call through `dyn Trait`) goes
/// through the breaker.
fn in_shape(shape: &Shape, wrapped: TokenStream) -> TokenStream {
    match shape {
        Shape::Async => wrapped,
        Shape::Boxed(b) => {
            let (before, pin, attrs, capture) = (&b.before, &b.pin, &b.attrs, &b.capture);
            quote! {
                #(#before)*
                #pin(#(#attrs)* async #capture { #wrapped })
            }
        }
    }
}

/// A type named like a `Result` but not by its path (`SearchResult`) is answered as a value
/// (it has a fallback, or `valid` refused it). If it is in fact an alias of a `Result`, its
/// `Err`s would silently count as successes, so the type itself is probed: autoref
/// specialization picks the method that returns `()` for any other type, and for a `Result`
/// the one that returns a type whose name says what to do, a type error at the return type.
fn alias_guard(out: &Output) -> TokenStream {
    let ret = &out.ty;
    // An opaque type (`impl Trait` inside it) cannot be named, and cannot be a `Result` alias.
    if !out.result_like || ret.to_string() == "_" {
        return TokenStream::new();
    }
    quote_spanned! {out.span=>
        #[allow(dead_code, non_camel_case_types, clippy::let_unit_value)]
        {
            struct __FuseboxProbe<T>(::core::marker::PhantomData<T>);
            struct WriteTheResultTypeThisAliasStandsFor;
            trait __FuseboxIsResult {
                fn __fusebox_kind(&self) -> WriteTheResultTypeThisAliasStandsFor {
                    WriteTheResultTypeThisAliasStandsFor
                }
            }
            impl<T, E> __FuseboxIsResult for __FuseboxProbe<::core::result::Result<T, E>> {}
            trait __FuseboxNotResult {
                fn __fusebox_kind(&self) {}
            }
            impl<T> __FuseboxNotResult for &__FuseboxProbe<T> {}
            let _: () = (&__FuseboxProbe::<#ret>(::core::marker::PhantomData)).__fusebox_kind();
        }
    }
}

/// The retry budget's name: the breaker's (so it counts that name's calls), else the
/// bulkhead's, else the function's default name.
fn retry_name(v: &Valid<'_>, default_name: &TokenStream) -> TokenStream {
    let given = v.breaker.as_ref().and_then(|b| b.name.as_ref());
    match given.or_else(|| v.bulkhead.as_ref().and_then(|b| b.name.as_ref())) {
        Some((n, _)) => quote!(#n),
        None => default_name.clone(),
    }
}

/// `module::path::fn_name`, computed where the function is.
fn default_name(v: &Valid<'_>) -> TokenStream {
    let name = v.func.sig.ident.to_string();
    quote!(::core::concat!(::core::module_path!(), "::", #name))
}

/// The user's body as a future of a `Result`, with a fake return edge (as tracing's
/// `#[instrument]` does) so `?`, `return` and type errors all see the declared return type.
/// The statements are spliced, not the block: a block of one expression in tail position
/// would make rustc warn "unnecessary braces" at the user's braces.
fn call_future(body: TokenStream, out: &Output) -> TokenStream {
    let ret = &out.ty;
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
        return quote!(async move { #edge #body });
    }
    // Not a `Result`: the body cannot fail, only be rejected, time out or panic.
    quote! {
        async move {
            ::core::result::Result::Ok::<#ret, ::core::convert::Infallible>(
                async move { #edge #body }.await
            )
        }
    }
}
