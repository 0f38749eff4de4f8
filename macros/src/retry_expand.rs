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
use crate::tokens::{duration, respan};
use crate::valid::Valid;

/// What `expand` hands over: the handles, the call and the answer to each outcome.
pub struct Pieces<'a> {
    pub pv: &'a TokenStream,
    pub name: TokenStream,
    pub breaker: Option<&'a TokenStream>,
    pub bulkhead: Option<&'a TokenStream>,
    pub failure: TokenStream,
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
    let on_failed = match (p.breaker, p.bulkhead) {
        (None, None) => quote!(#pv::retry_gave_up(#err)),
        _ => p.on_failed.clone(),
    };
    let call = &p.call;
    quote! {
        #setup
        #touch
        match #pv::run_retry(
            #policy,
            || {
                #rebind
                let __fusebox_call = #call;
                #attempt
            },
            #retry_on,
            #retry_after,
        )
        .await
        {
            ::core::result::Result::Ok(::core::result::Result::Ok(#value)) => #on_ok,
            ::core::result::Result::Ok(::core::result::Result::Err(#err)) => #on_ignored,
            ::core::result::Result::Err(#err) => #on_failed,
        }
    }
}

/// The call site's `Retry`, built once: named as the breaker (so the budget counts that
/// name's calls), each attempt timed by the breaker's timeout.
fn policy_setup(v: &Valid<'_>, r: &RetryArgs, p: &Pieces<'_>, policy: &Ident) -> TokenStream {
    let pv = p.pv;
    let name = &p.name;
    let mut builder = quote!(#pv::Retry::builder(#name));
    if let Some(n) = r.attempts {
        let n = n as u32;
        builder.extend(quote!(.attempts(#n)));
    }
    if r.backoff.is_some() || r.backoff_max.is_some() {
        let base = duration(r.backoff.unwrap_or(std::time::Duration::from_millis(50)));
        let cap = duration(r.backoff_max.unwrap_or(std::time::Duration::from_secs(2)));
        builder.extend(quote!(.backoff(#pv::Backoff::new(#base, #cap))));
    }
    if r.budget.is_some() || r.budget_floor.is_some() {
        let share = r.budget.unwrap_or(20) as u8;
        let floor = r.budget_floor.unwrap_or(1) as u32;
        builder.extend(quote!(.budget(#pv::BudgetConfig {
            share_pct: #share,
            floor_per_s: #floor,
            ..::core::default::Default::default()
        })));
    }
    if let Some(t) = r.total {
        let t = duration(t);
        builder.extend(quote!(.total(#t)));
    }
    if let Some(t) = v.breaker.as_ref().and_then(|b| b.settings.timeout()) {
        let t = duration(t);
        builder.extend(quote!(.attempt_timeout(#t)));
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
        if mutability.is_some() {
            touch.extend(quote!(let _ = &mut #name;));
        }
        rebind.extend(quote_spanned! {span=>
            #[allow(unused_mut)]
            let #mutability #name = #pv::RetryArgument::retry_clone(&#name);
        });
    }
    (touch, rebind)
}

/// One attempt: through the breaker (and bulkhead), or the body alone, as a retry's result.
fn attempt(p: &Pieces<'_>) -> TokenStream {
    let pv = p.pv;
    let b = format_ident!("__fusebox_b", span = Span::mixed_site());
    let k = format_ident!("__fusebox_k", span = Span::mixed_site());
    let (bind_k, some_k) = match p.bulkhead {
        Some(h) => (
            quote!(let #k = #h;),
            quote!(::core::option::Option::Some(#k)),
        ),
        None => (quote!(), quote!(::core::option::Option::None)),
    };
    let failure = &p.failure;
    match (p.breaker, p.bulkhead) {
        (Some(h), _) => quote! {
            let #b = #h;
            #bind_k
            async move {
                #pv::retry_attempt(#pv::run(#b, #some_k, __fusebox_call, #failure).await, true)
            }
        },
        (None, Some(_)) => quote! {
            #bind_k
            async move {
                #pv::retry_attempt(#pv::run_bulkhead(#some_k, __fusebox_call).await, false)
            }
        },
        (None, None) => quote! {
            async move {
                match __fusebox_call.await {
                    ::core::result::Result::Ok(v) => ::core::result::Result::Ok(::core::result::Result::Ok(v)),
                    ::core::result::Result::Err(e) => ::core::result::Result::Err(#pv::Error::Failed(e)),
                }
            }
        },
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
