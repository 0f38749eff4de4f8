//! `stale_for`: the generated code that keeps the last `Ok` value per key and answers with it
//! on a rejection or a counted failure (the checks of its arguments are in `valid`).

use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, FnArg, Pat, Signature, Type};

use crate::breaker_args::{BreakerArgs, STALE_CAPACITY, STALE_MAX_BYTES};
use crate::signature::Output;
use crate::tokens::{cfg_attrs, duration, fallback_call, respan};

/// The pieces `expand` splices in.
pub struct Stale {
    pub setup: TokenStream,
    cache: syn::Ident,
    key: syn::Ident,
    handle: TokenStream,
    stale: syn::Ident,
    served: TokenStream,
    pv: TokenStream,
    /// `failure_if_ok` given: an `Ok` it counts as a failure is not a good value to keep.
    failure_if_ok: bool,
}

/// The stale cache and key of a call site with `stale_for`; `handle` is the `&Breaker`.
pub fn expand(
    sig: &Signature,
    out: &Output,
    b: &BreakerArgs,
    handle: &TokenStream,
    pv: &TokenStream,
) -> Stale {
    let cache = format_ident!("__fusebox_stale", span = Span::mixed_site());
    let key = format_ident!("__fusebox_stale_key", span = Span::mixed_site());
    let stale = format_ident!("__fusebox_stale_value", span = Span::mixed_site());
    let site = site(out, b, pv);
    let key_expr = key_expr(sig, b, pv);
    Stale {
        // Before the body: the key is taken from the arguments before the body consumes them.
        setup: {
            // Set by the classifier when `failure_if_ok` counts the `Ok` as a failure: the
            // predicate runs once, so a wrong signature is one error (`expand::classifier`).
            let flag = b.failure_if_ok.as_ref().map(|_| {
                let flag = ok_failed_flag();
                quote!(let #flag = ::core::sync::atomic::AtomicBool::new(false);)
            });
            quote! {
                let #cache = #site;
                let #key = #key_expr;
                #flag
            }
        },
        served: served(out, b, &stale, pv),
        cache,
        key,
        handle: handle.clone(),
        stale,
        pv: pv.clone(),
        failure_if_ok: b.failure_if_ok.is_some(),
    }
}

/// The flag a call with `stale_for` and `failure_if_ok` raises when its `Ok` was counted as
/// a failure: `wrap_ok` then keeps no value.
pub fn ok_failed_flag() -> syn::Ident {
    format_ident!("__fusebox_ok_failed", span = Span::mixed_site())
}

/// The call site's cache, a static made once with the limits of the arguments.
fn site(out: &Output, b: &BreakerArgs, pv: &TokenStream) -> TokenStream {
    let max_age = duration(b.stale_for.unwrap_or_default());
    let capacity = Literal::u64_unsuffixed(b.stale_capacity.unwrap_or(STALE_CAPACITY));
    let max_bytes = Literal::u64_unsuffixed(b.stale_max_bytes.unwrap_or(STALE_MAX_BYTES));
    // At the return type: a value type the cache cannot keep is reported there.
    let pv_at_ret = respan(pv, out.span);
    quote_spanned! {out.span=>
        {
            static SITE: #pv_at_ret::StaleSite = #pv_at_ret::StaleSite::new();
            SITE.cache(#max_age, #capacity, #max_bytes)
        }
    }
}

/// The key of the last good value: `stale_key`'s parts, or every named argument but `self`.
fn key_expr(sig: &Signature, b: &BreakerArgs, pv: &TokenStream) -> TokenStream {
    match &b.stale_key {
        Some(Expr::Tuple(t)) => {
            let parts = t.elems.iter().map(|e| part(&borrow(sig, e), e.span(), pv));
            quote!((#(#parts,)*))
        }
        Some(e) => part(&borrow(sig, e), e.span(), pv),
        None => {
            let parts = sig.inputs.iter().filter_map(|input| {
                let FnArg::Typed(t) = input else { return None };
                let Pat::Ident(p) = &*t.pat else { return None };
                let name = &p.ident;
                // `&str` is owned as a `String`, `&[T]` as a `Vec<T>`, a value is cloned.
                let arg = match &*t.ty {
                    Type::Reference(_) => quote_spanned!(name.span()=> &*#name),
                    _ => quote_spanned!(name.span()=> &#name),
                };
                let part = part(&arg, p.ident.span(), pv);
                let cfg = cfg_attrs(&t.attrs);
                Some(quote!(#cfg #part))
            });
            quote!((#(#parts,)*))
        }
    }
}

/// The answer with a kept value: `stale_fallback`'s, or the value itself.
fn served(out: &Output, b: &BreakerArgs, stale: &syn::Ident, pv: &TokenStream) -> TokenStream {
    match &b.stale_fallback {
        Some(f) => {
            // At the fallback: a fallback taking the wrong value is reported at its path.
            let at = syn::Ident::new(
                "__fusebox_stale_value",
                Span::mixed_site().located_at(f.span()),
            );
            fallback_call(f, &[quote!(#at)], &out.ty, pv)
        }
        None if out.is_result => quote!(::core::result::Result::Ok(#stale.value)),
        None => quote!(#stale.value),
    }
}

/// A reference to one element of `stale_key`: an argument passed by reference is reborrowed,
/// so it is owned like in the default key (`path: &str` becomes a `String`).
fn borrow(sig: &Signature, e: &Expr) -> TokenStream {
    let by_ref = match e {
        Expr::Path(p) if p.qself.is_none() => sig.inputs.iter().any(|input| match input {
            FnArg::Typed(t) => {
                matches!(&*t.ty, Type::Reference(_))
                    && matches!(&*t.pat, Pat::Ident(i) if p.path.is_ident(&i.ident))
            }
            FnArg::Receiver(_) => false,
        }),
        _ => false,
    };
    let span = e.span();
    if by_ref {
        quote_spanned!(span=> &*(#e))
    } else {
        quote_spanned!(span=> &(#e))
    }
}

/// One part of the key, at `span` so a missing bound is reported at that argument.
fn part(arg: &TokenStream, span: Span, pv: &TokenStream) -> TokenStream {
    let pv = respan(pv, span);
    quote_spanned!(span=> #pv::stale_key_part(#arg))
}

impl Stale {
    /// An `Ok` value is remembered, then answered as before; one that `failure_if_ok` counted
    /// as a failure (a 503 inside `Ok`, flagged by the classifier: [`ok_failed_flag`]) is
    /// answered as is but not remembered: it is not a last good value.
    pub fn wrap_ok(&self, on_ok: TokenStream) -> TokenStream {
        let (pv, cache, key, handle) = (&self.pv, &self.cache, &self.key, &self.handle);
        let value = format_ident!("__fusebox_value", span = Span::mixed_site());
        let put = quote!(#pv::stale_put(&#cache, #handle, #key, &#value););
        let put = if self.failure_if_ok {
            let flag = ok_failed_flag();
            quote! {
                if !#flag.load(::core::sync::atomic::Ordering::Relaxed) {
                    #put
                }
            }
        } else {
            put
        };
        quote! {{
            #put
            #on_ok
        }}
    }

    /// A rejection or counted failure is answered with a fresh last good value if one is kept.
    pub fn wrap_failed(&self, on_failed: TokenStream) -> TokenStream {
        let (pv, cache, key, handle) = (&self.pv, &self.cache, &self.key, &self.handle);
        let (stale, served) = (&self.stale, &self.served);
        quote! {
            match #pv::stale_get(&#cache, &#key, #handle) {
                ::core::option::Option::Some(#stale) => #served,
                ::core::option::Option::None => #on_failed,
            }
        }
    }
}
