//! `stale_for`: the generated code that keeps the last `Ok` value per key and answers with it
//! on a rejection or a counted failure, and the check of the arguments the default key needs.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, FnArg, ItemFn, Pat, Type};

use crate::args::Errors;
use crate::breaker_args::{BreakerArgs, STALE_CAPACITY, STALE_MAX_BYTES};
use crate::shape::is_renamed_pattern;
use crate::signature::Output;
use crate::tokens::{duration, fallback_call, respan};

/// Without `stale_key`, every argument but `self` is part of the key, so each needs a name.
pub fn check_arguments(func: &ItemFn, errors: &mut Errors) {
    for input in &func.sig.inputs {
        let FnArg::Typed(t) = input else { continue };
        if !t.attrs.is_empty() {
            errors.at(
                t.span(),
                "`stale_for` keys the last good values by the arguments, and an argument with attributes \
                 (like `#[cfg]`) cannot be part of that key; choose the key with `stale_key = expr`",
            );
        } else if !matches!(&*t.pat, Pat::Ident(p) if p.subpat.is_none() && !is_renamed_pattern(p))
        {
            errors.at(
                t.pat.span(),
                "`stale_for` keys the last good values by the arguments, by name, and this argument is a pattern; \
                 give it a name, or choose the key with `stale_key = expr`",
            );
        }
    }
}

/// A method's last good values depend on `self` (a tenant, a region, a client) that the
/// default key cannot see, so one instance's value would be served to another's callers:
/// a method with `stale_for` must say what its values depend on.
pub fn check_receiver(func: &ItemFn, b: &BreakerArgs, errors: &mut Errors) {
    if b.stale_key.is_some() {
        return;
    }
    let Some(FnArg::Receiver(r)) = func.sig.inputs.first() else {
        return;
    };
    let first = func.sig.inputs.iter().find_map(|i| match i {
        FnArg::Typed(t) => match &*t.pat {
            Pat::Ident(p) => Some(p.ident.to_string()),
            _ => None,
        },
        FnArg::Receiver(_) => None,
    });
    let example = match first {
        Some(arg) => format!("`stale_key = (self.tenant, {arg})`"),
        None => "`stale_key = self.tenant`".to_owned(),
    };
    errors.at(
        r.self_token.span,
        format!(
            "a method with `stale_for` must name `stale_key`: the default key leaves `self` out, so one \
             instance's (one tenant's) last good value would be served to another's callers; \
             name what the value depends on, like {example}"
        ),
    );
}

/// The pieces `expand` splices in.
pub struct Stale {
    pub setup: TokenStream,
    cache: syn::Ident,
    key: syn::Ident,
    handle: TokenStream,
    stale: syn::Ident,
    served: TokenStream,
    pv: TokenStream,
}

/// The stale cache and key of a call site with `stale_for`; `handle` is the `&Breaker`.
pub fn expand(
    func: &ItemFn,
    out: &Output,
    b: &BreakerArgs,
    handle: &TokenStream,
    pv: &TokenStream,
) -> Stale {
    let max_age = b.stale_for.unwrap_or_default();
    let cache = format_ident!("__fusebox_stale", span = Span::mixed_site());
    let key = format_ident!("__fusebox_stale_key", span = Span::mixed_site());
    let stale = format_ident!("__fusebox_stale_value", span = Span::mixed_site());
    let max_age = duration(max_age);
    let capacity = Literal::u64_unsuffixed(b.stale_capacity.unwrap_or(STALE_CAPACITY));
    let max_bytes = Literal::u64_unsuffixed(b.stale_max_bytes.unwrap_or(STALE_MAX_BYTES));
    // At the return type: a value type the cache cannot keep is reported there.
    let pv_at_ret = respan(pv, out.span);
    let site = quote_spanned! {out.span=>
        {
            static SITE: #pv_at_ret::StaleSite = #pv_at_ret::StaleSite::new();
            SITE.cache(#max_age, #capacity, #max_bytes)
        }
    };
    let key_expr = match &b.stale_key {
        Some(Expr::Tuple(t)) => {
            let parts = t.elems.iter().map(|e| part(&borrow(func, e), e.span(), pv));
            quote!((#(#parts,)*))
        }
        Some(e) => part(&borrow(func, e), e.span(), pv),
        None => {
            let parts = func.sig.inputs.iter().filter_map(|input| {
                let FnArg::Typed(t) = input else { return None };
                let Pat::Ident(p) = &*t.pat else { return None };
                let name = &p.ident;
                // `&str` is owned as a `String`, `&[T]` as a `Vec<T>`, a value is cloned.
                let arg = match &*t.ty {
                    Type::Reference(_) => quote_spanned!(name.span()=> &*#name),
                    _ => quote_spanned!(name.span()=> &#name),
                };
                Some(part(&arg, p.ident.span(), pv))
            });
            quote!((#(#parts,)*))
        }
    };
    let served = match &b.stale_fallback {
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
    };
    Stale {
        // Before the body: the key is taken from the arguments before the body consumes them.
        setup: quote! {
            let #cache = #site;
            let #key = #key_expr;
        },
        cache,
        key,
        handle: handle.clone(),
        stale,
        served,
        pv: pv.clone(),
    }
}

/// A reference to one element of `stale_key`: an argument passed by reference is reborrowed,
/// so it is owned like in the default key (`path: &str` becomes a `String`).
fn borrow(func: &ItemFn, e: &Expr) -> TokenStream {
    let by_ref = match e {
        Expr::Path(p) if p.qself.is_none() => func.sig.inputs.iter().any(|input| match input {
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
    /// An `Ok` value is remembered, then answered as before.
    pub fn wrap_ok(&self, on_ok: TokenStream) -> TokenStream {
        let (pv, cache, key, handle) = (&self.pv, &self.cache, &self.key, &self.handle);
        let value = format_ident!("__fusebox_value", span = Span::mixed_site());
        quote! {{
            #pv::stale_put(&#cache, #handle, #key, &#value);
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
