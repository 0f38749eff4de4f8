//! Small token builders that `expand` and `stale` both use (kept below both, so neither
//! module imports the other's helpers).

use std::time::Duration;

use proc_macro2::{Literal, Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Expr;

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
        // Bound first: calling a closure where it is written trips clippy in the user's crate.
        _ => quote_spanned!(span=> {
            let __fusebox_fallback = #fallback;
            __fusebox_fallback(#(#before,)* #arg)
        }),
    };
    let pv = respan(pv, span);
    quote_spanned! {span=>
        #pv::fallback_answer::<#ret, _, _>(#call).await
    }
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
    map_spans(tokens, &|_| span)
}

/// `tokens` at `span`, but identifiers moved to its location only: each keeps its own name
/// resolution, so an argument declared inside a `macro_rules!` still resolves where the
/// fallback's path came from the macro's caller (hygiene is a property of the span).
/// Generated paths keep [`respan`]: there, the user's resolution lets rustc report one
/// error, not a cascade.
pub fn relocate(tokens: &TokenStream, span: Span) -> TokenStream {
    map_spans(tokens, &|t| match t {
        proc_macro2::TokenTree::Ident(i) => i.span().located_at(span),
        _ => span,
    })
}

fn map_spans(tokens: &TokenStream, f: &dyn Fn(&proc_macro2::TokenTree) -> Span) -> TokenStream {
    tokens
        .clone()
        .into_iter()
        .map(|mut t| {
            let at = f(&t);
            if let proc_macro2::TokenTree::Group(g) = &t {
                let mut g2 = proc_macro2::Group::new(g.delimiter(), map_spans(&g.stream(), f));
                g2.set_span(at);
                t = proc_macro2::TokenTree::Group(g2);
            } else {
                t.set_span(at);
            }
            t
        })
        .collect()
}

/// The `#[cfg]` attributes of an argument, to repeat on every use the expansion makes of it:
/// a `#[cfg]`'d-out argument is then gone from those uses too.
pub fn cfg_attrs(attrs: &[syn::Attribute]) -> TokenStream {
    let cfgs = attrs.iter().filter(|a| is_cfg(a));
    quote!(#(#cfgs)*)
}

/// `#[cfg(..)]`: an attribute the expansion can repeat wherever it uses the argument.
pub fn is_cfg(a: &syn::Attribute) -> bool {
    a.path().is_ident("cfg")
}
