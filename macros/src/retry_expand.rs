//! Phase 3 for `#[retry]`: the attempt loop around the breaker and bulkhead's call.
//!
//! Retry is always outermost (DESIGN.md's order, whatever order the attributes are written):
//! each attempt rebinds the arguments (a clone of each by-value one), makes the body's future
//! again and runs it through the breaker and bulkhead, so each attempt is judged as a call of
//! its own. The fallback, if any, answers once, after the retries gave up.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, Ident, Pat};

use crate::retry_args::RetryArgs;
use crate::tokens::{cfg_attrs, duration, respan};
use crate::valid::Valid;

/// What `expand` hands over: the handles, the call and the answer to each outcome.
pub struct Pieces<'a> {
    pub pv: &'a TokenStream,
    pub name: TokenStream,
    pub breaker: Option<&'a TokenStream>,
    pub bulkhead: Option<&'a TokenStream>,
    pub failure: TokenStream,
    /// The three-way classifier when `ignore` or `failure_if_ok` is given: each attempt is
    /// classified as the call without a retry is.
    pub classify: Option<TokenStream>,
    pub call: TokenStream,
    pub value: &'a Ident,
    pub err: &'a Ident,
    pub on_ok: TokenStream,
    pub on_ignored: TokenStream,
    pub on_failed: TokenStream,
}

/// The retry's setup and the `match` on its result, in place of the single call.
pub fn wrap(v: &Valid<'_>, r: &RetryArgs, p: Pieces<'_>) -> TokenStream {
    let pv = p.pv;
    let policy = format_ident!("__fusebox_retry", span = Span::mixed_site());
    let setup = policy_setup(v, r, &p, &policy);
    let rebind = rebind_arguments(v, pv);
    let (touch, rebind) = (rebind.0, rebind.1);
    let attempt = attempt(&p);
    let (retry_on, retry_after) = hooks(v, r, pv);
    let (value, err, on_ok, on_ignored) = (p.value, p.err, &p.on_ok, &p.on_ignored);
    let attempt_fn = format_ident!("__fusebox_attempt", span = Span::mixed_site());
    let started = format_ident!("__fusebox_started", span = Span::mixed_site());
    let first = format_ident!("__fusebox_first", span = Span::mixed_site());
    // The first attempt is awaited here, inline, and its `Completion` matched as the call
    // without a retry matches it: a first success costs the deposit (`retry_begin`) more. The
    // retries are boxed, on the failure path. Alone, the body's errors are retried as they
    // are (no refusal can come back); with a breaker, its handle is lent so a `retry_after`
    // hint can hold it open; with a bulkhead alone, every error may be retried.
    let on_failed = &p.on_failed;
    let after = |rest: TokenStream| {
        quote! {
            match #rest.await {
                ::core::result::Result::Ok(::core::result::Result::Ok(#value)) => #on_ok,
                ::core::result::Result::Ok(::core::result::Result::Err(#err)) => #on_ignored,
                ::core::result::Result::Err(#err) => #on_failed,
            }
        }
    };
    let first_match = match (p.breaker, p.bulkhead) {
        (None, None) => quote! {
            match #attempt_fn().await {
                ::core::result::Result::Ok(#value) => #on_ok,
                ::core::result::Result::Err(#first) => {
                    match #pv::retry_rest_plain(#policy.get(), #started, #first, #attempt_fn, #retry_on, #retry_after).await {
                        ::core::result::Result::Ok(#value) => #on_ok,
                        ::core::result::Result::Err(#err) => ::core::result::Result::Err(#err),
                    }
                }
            }
        },
        (Some(b), _) => {
            let rest = after(quote! {
                #pv::retry_rest(#policy.get(), ::core::option::Option::Some(#b), true, #started, #first, #attempt_fn, #retry_on, #retry_after)
            });
            quote! {
                match #attempt_fn().await {
                    #pv::Completion::Ok(#value) => #on_ok,
                    #pv::Completion::Ignored(#err) => #on_ignored,
                    #pv::Completion::Failed(#first) => #rest,
                }
            }
        }
        (None, Some(_)) => {
            let rest = after(quote! {
                #pv::retry_rest(#policy.get(), ::core::option::Option::None, false, #started, #first, #attempt_fn, #retry_on, #retry_after)
            });
            quote! {
                match #attempt_fn().await {
                    #pv::Completion::Ok(#value) => #on_ok,
                    #pv::Completion::Ignored(#first) => {
                        let #first = #pv::Error::Failed(#first);
                        #rest
                    }
                    #pv::Completion::Failed(#first) => #rest,
                }
            }
        }
    };
    let call = &p.call;
    quote! {
        #setup
        #touch
        let #started = #pv::retry_begin(#policy.get());
        let mut #attempt_fn = || {
            #rebind
            let __fusebox_call = #call;
            #attempt
        };
        // Bound, not the tail: see `expand.rs` (Rust 2024's tail temporaries).
        let __fusebox_answer = #first_match;
        __fusebox_answer
    }
}

/// The call site's `Retry`, built once: named as the breaker (so the budget counts that
/// name's calls), each attempt timed by the breaker's timeout.
fn policy_setup(v: &Valid<'_>, r: &RetryArgs, p: &Pieces<'_>, policy: &Ident) -> TokenStream {
    let pv = p.pv;
    let name = &p.name;
    let mut builder = quote!(#pv::Retry::builder(#name));
    // Only the settings written are passed on: the rest are the runtime's defaults, the same
    // constants of `fusebox-settings`.
    if let Some(s) = &r.settings {
        if r.gave("attempts") {
            let n = s.attempts();
            builder.extend(quote!(.attempts(#n)));
        }
        if r.gave("backoff") || r.gave("backoff_max") {
            let (base, cap) = (duration(s.backoff()), duration(s.backoff_max()));
            builder.extend(quote!(.backoff(#pv::Backoff::new(#base, #cap))));
        }
        if let Some((share, floor, window)) = s
            .budget()
            .filter(|_| r.gave("budget") || r.gave("budget_floor") || r.gave("budget_window"))
        {
            let window = duration(window);
            builder.extend(quote!(.budget(#pv::BudgetConfig {
                share_pct: #share,
                floor_per_s: #floor,
                window: #window,
            })));
        }
        if let Some(t) = s.total() {
            let t = duration(t);
            builder.extend(quote!(.total(#t)));
        }
    }
    if let Some(t) = v.breaker.as_ref().and_then(|b| b.settings.timeout()) {
        let t = duration(t);
        builder.extend(quote!(.attempt_timeout(#t)));
    }
    if r.no_hold_open {
        builder.extend(quote!(.hold_open_on_retry_after(false)));
    }
    if r.idempotent {
        builder.extend(quote!(.idempotent(true)));
    }
    quote! {
        let #policy = {
            static CELL: #pv::OnceCell<::core::option::Option<#pv::Retry>> = #pv::OnceCell::new();
            #pv::static_retry(&CELL, || #builder)
        };
    }
}

/// Per attempt, each named argument again: a clone of a value (a copy of a reference),
/// checked by `RetryArgument` at the argument's type. `touch` keeps a `mut` argument's `mut`
/// used (the clones are what the body mutates).
fn rebind_arguments(v: &Valid<'_>, pv: &TokenStream) -> (TokenStream, TokenStream) {
    let mut touch = TokenStream::new();
    let mut rebind = TokenStream::new();
    for input in &v.func.sig.inputs {
        let FnArg::Typed(t) = input else { continue };
        let Pat::Ident(p) = &*t.pat else { continue };
        let (name, mutability) = (&p.ident, &p.mutability);
        let span = t.ty.span();
        let pv = respan(pv, span);
        let cfg = cfg_attrs(&t.attrs);
        if mutability.is_some() {
            touch.extend(quote!(#cfg let _ = &mut #name;));
        }
        // The clone shadows the argument by design (the body names it): clippy's opt-in
        // shadowing lints would otherwise point at the user's argument.
        rebind.extend(quote_spanned! {span=>
            #cfg
            #[allow(unused_mut, unknown_lints, clippy::shadow_reuse, clippy::shadow_same, clippy::shadow_unrelated)]
            let #mutability #name = #pv::RetryArgument::retry_clone(&#name);
        });
    }
    (touch, rebind)
}

/// One attempt: the future of one call through the breaker (and bulkhead), whose
/// `Completion` the retry reads, or the body's own future alone.
fn attempt(p: &Pieces<'_>) -> TokenStream {
    let pv = p.pv;
    let some = |h: Option<&TokenStream>| match h {
        Some(h) => quote!(::core::option::Option::Some(#h)),
        None => quote!(::core::option::Option::None),
    };
    let k = some(p.bulkhead);
    let failure = &p.failure;
    match (p.breaker, p.bulkhead) {
        (Some(b), _) => match &p.classify {
            Some(classify) => quote!(#pv::run_classified(#b, #k, __fusebox_call, #classify)),
            None => quote!(#pv::run(#b, #k, __fusebox_call, #failure)),
        },
        (None, Some(_)) => quote!(#pv::run_bulkhead(#k, __fusebox_call)),
        (None, None) => quote!(__fusebox_call),
    }
}

/// `retry_on` and `retry_after` as fn pointers of the function's own error type (a wrong
/// signature is one type error at the path); by default every counted failure is retried,
/// with no server hint.
fn hooks(v: &Valid<'_>, r: &RetryArgs, pv: &TokenStream) -> (TokenStream, TokenStream) {
    let ret = &v.out.ty;
    let hook = |f: &syn::Expr, helper: &str| {
        let span = f.span();
        let pv = respan(pv, span);
        let helper = Ident::new(helper, span);
        quote_spanned!(span=> #pv::#helper::<#ret>(#f))
    };
    let retry_on = match &r.retry_on {
        Some(f) => hook(f, "retry_on_for"),
        None => quote!(|_: &_| true),
    };
    let retry_after = match &r.retry_after {
        Some(f) => hook(f, "retry_after_for"),
        None => quote!(|_: &_| ::core::option::Option::None),
    };
    (retry_on, retry_after)
}
