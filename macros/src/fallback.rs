//! `fallback = path`: the call of the fallback, of the error alone or of the call's arguments
//! by reference and then the error (`fn(&Order, Error<E>) -> R`, `&self` first for methods).
//!
//! The macro cannot see the fallback's signature, so it lends every argument it can without
//! changing the body, and the runtime's `Fallback` trait picks the shape the function has: a
//! fallback of the error alone ignores the tuple and is called exactly as before. An argument
//! can be lent when the body's `async move` copies rather than moves it: references (`&T`,
//! `&self`) and numbers, `bool`, `char` by value; other owned arguments are moved into the call.
//! `&mut self` and `&mut` arguments are moved into the call too (a `&mut` is not `Copy`).
//! The lent list skips the arguments moved into the call, so a fallback written for the lent
//! ones keeps compiling; a fallback generic in an argument's type takes the next lent one, so
//! the reference says to give such a fallback concrete types.
//!
//! Where the call keeps more, it lends a longer list too (the runtime's `Lent`,
//! `EitherFallback`), and the fallback may take either: under `#[retry]` nothing is moved (each
//! attempt takes clones), so every argument (`fn(&Order, Error<E>)` for `order: Order`); for
//! `self: &Arc<Self>`, the receiver as `&Self`. `self: Arc<Self>` is moved into the body, so a
//! second handle is kept, and only for a fallback that takes `&self`: the runtime's `keep.rs`
//! asks the fallback's type before the body runs (`kept_handle_call`).

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, FnArg, Ident, Pat, Signature, Type};

use crate::shape::is_renamed_pattern;
use crate::tokens::{cfg_attrs, fallback_call, relocate, respan};

/// The fallback's call, and what the call keeps for it before its body runs.
pub struct FallbackCall {
    /// Statements before the body's future is made (a clone of an `Arc<Self>` receiver).
    pub keep: TokenStream,
    /// The fallback's answer for a rejection or counted failure, awaited if it is async.
    pub call: TokenStream,
}

/// The fallback's call. `retried`: under `#[retry]`, so the by-value arguments can be lent
/// too. `keep` runs where the body was, before its future takes the arguments: in an
/// async-trait method that is inside the boxed block, which still holds the receiver.
pub fn call(
    sig: &Signature,
    fallback: &Expr,
    ret: &TokenStream,
    pv: &TokenStream,
    retried: bool,
) -> FallbackCall {
    let closure = match fallback {
        Expr::Closure(c) => Some(c),
        _ => None,
    };
    let receiver = pointer_receiver(sig);
    let Lists {
        lent,
        every,
        both,
        keep,
    } = lists(sig, fallback, retried, receiver);
    if let (Some((borrowed, self_token)), None) = (receiver, closure) {
        // A path fallback of `self: Arc<Self>` (moved into the body, so a handle is kept for a
        // fallback that takes `&self`), or of `self: &Arc<Self>` where the two lists are as
        // long: the type system says which list the fallback takes.
        if (!borrowed && !retried) || (borrowed && every.len() == lent.len()) {
            return kept_handle_call(self_token, borrowed, fallback, &lent, ret, pv);
        }
    }
    let Some(c) = closure else {
        return FallbackCall {
            keep,
            call: path_call(fallback, &lent, both.then_some(&every[..]), ret, pv),
        };
    };
    // A closure shows its arity: more than the error means it takes the arguments. Under
    // `self: &Arc<Self>` both lists are as long: the first parameter's type tells them apart
    // (untyped, or typed as the receiver, keeps the receiver as it is).
    let longer = both
        && c.inputs.len() == every.len() + 1
        && (every.len() > lent.len() || !takes_receiver_as_written(c));
    if longer {
        let call = fallback_call(fallback, &every, ret, pv);
        return FallbackCall { keep, call };
    }
    // Of the error alone, or of the list: nothing kept.
    let list: &[TokenStream] = if c.inputs.len() > 1 { &lent } else { &[] };
    FallbackCall {
        keep: TokenStream::new(),
        call: fallback_call(fallback, list, ret, pv),
    }
}

/// What a call site lends: the list every call can, the longer one where it keeps more, and
/// the statements that keep it.
struct Lists {
    lent: Vec<TokenStream>,
    every: Vec<TokenStream>,
    /// The two differ: only then is the longer one offered (else one list says it all).
    both: bool,
    keep: TokenStream,
}

/// The two lists (equal when the call keeps nothing more): under `#[retry]` every argument;
/// for `self: Arc<Self>` (a closure taking it) `&self` first from a kept clone; for
/// `self: &Arc<Self>` the receiver as the `&Self` it points to.
fn lists(
    sig: &Signature,
    fallback: &Expr,
    retried: bool,
    receiver: Option<(bool, &syn::token::SelfValue)>,
) -> Lists {
    let lent = at_fallback(lent_arguments(sig), fallback);
    let mut every = if retried {
        at_fallback(every_argument(sig), fallback)
    } else {
        lent.clone()
    };
    let mut both = every.len() > lent.len();
    let mut keep = TokenStream::new();
    match receiver {
        Some((false, self_token)) if !retried => {
            let this = Ident::new("__fusebox_this", Span::mixed_site());
            keep = quote!(let #this = ::core::clone::Clone::clone(&#self_token););
            every.insert(0, relocate(&quote!(&*#this), fallback.span()));
            both = true;
        }
        Some((true, self_token)) => {
            every[0] = relocate(&quote!(&**#self_token), fallback.span());
            both = true;
        }
        _ => {}
    }
    Lists {
        lent,
        every,
        both,
        keep,
    }
}

/// At the fallback's token: a lent argument the fallback does not take is a mistake in the
/// fallback's signature, so the compiler points there, not at the whole attribute.
fn at_fallback(list: Vec<TokenStream>, fallback: &Expr) -> Vec<TokenStream> {
    list.iter().map(|t| relocate(t, fallback.span())).collect()
}

/// A path fallback's call: through `Fallback` with the list, or `EitherFallback` with both.
fn path_call(
    fallback: &Expr,
    lent: &[TokenStream],
    every: Option<&[TokenStream]>,
    ret: &TokenStream,
    pv: &TokenStream,
) -> TokenStream {
    let span = fallback.span();
    let arg = Ident::new("__fusebox_err", Span::mixed_site().located_at(span));
    let pv = respan(pv, span);
    let (callee, args) = match every {
        Some(every) => (
            quote_spanned!(span=> call_either_fallback),
            quote_spanned!(span=> #pv::Lent { strict: (#(#lent,)*), every: (#(#every,)*) }),
        ),
        None => (
            quote_spanned!(span=> call_fallback),
            quote_spanned!(span=> (#(#lent,)*)),
        ),
    };
    quote_spanned! {span=>
        #pv::fallback_answer::<#ret, _, _>(
            #pv::#callee(#fallback, #args, #arg)
        ).await
    }
}

/// `self: Arc<Self>` with a path fallback: a clone of the handle is kept only if the fallback
/// takes `&self` first (the runtime's `keep.rs`: an autoref probe before the body, then the
/// call through what was kept), so a method whose fallback does not take it is unchanged.
/// `self: &Arc<Self>` (`borrowed`): the same question, and the reference is lent, not cloned.
fn kept_handle_call(
    self_token: &syn::token::SelfValue,
    borrowed: bool,
    fallback: &Expr,
    lent: &[TokenStream],
    ret: &TokenStream,
    pv: &TokenStream,
) -> FallbackCall {
    let span = fallback.span();
    let this = Ident::new("__fusebox_this", Span::mixed_site());
    let arg = Ident::new("__fusebox_err", Span::mixed_site().located_at(span));
    let pv = respan(pv, span);
    // What follows `&self` in the longer list: the usual one, less a borrowed receiver.
    let rest = if borrowed { &lent[1..] } else { lent };
    // Owned: does it take `&self` then the rest (keep a clone)? Borrowed: does it take the
    // usual list (lend nothing more)? See the runtime's `keep.rs` for why that way round.
    let (probe, handle) = if borrowed {
        let probe = quote! {
            use #pv::{LendsHandle as _, LendsNothing as _};
            (&#pv::lend_probe(&#fallback, &(#(#lent,)*))).lend(#self_token)
        };
        (probe, quote!(#this))
    } else {
        let probe = quote! {
            use #pv::{KeepsHandle as _, KeepsNothing as _};
            (&#pv::keep_probe(&#fallback, &(&*#self_token, #(#rest,)*))).keep(&#self_token)
        };
        (probe, quote!(&#this))
    };
    let keep = quote_spanned! {span=>
        let #this = {
            #[allow(unused_imports)]
            #probe
        };
    };
    let call = quote_spanned! {span=>
        #pv::fallback_answer::<#ret, _, _>(
            #pv::answer_kept(#handle, #fallback, (#(#lent,)*), (#(#rest,)*), #arg)
        ).await
    };
    FallbackCall { keep, call }
}

/// A receiver that points to `Self` through `Arc`, `Rc` or `Box` (whether it is borrowed,
/// `self: &Arc<Self>`, and its `self` token). `self: Arc<Self>` and `self: Rc<Self>` are
/// moved into the body and cheap to keep a clone of (one reference count per call, paid only
/// with a fallback); `self: &Arc<Self>` (or `&Rc`, `&Box`) is lent, and derefs to `&Self`.
fn pointer_receiver(sig: &Signature) -> Option<(bool, &syn::token::SelfValue)> {
    let Some(FnArg::Receiver(r)) = sig.inputs.first() else {
        return None;
    };
    let (borrowed, ty) = match &*r.ty {
        Type::Reference(t) if t.mutability.is_none() => (true, &*t.elem),
        Type::Reference(_) => return None,
        ty => (false, ty),
    };
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let clones = last.ident == "Arc" || last.ident == "Rc";
    if !(clones || borrowed && last.ident == "Box") {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let is_self = |a: &syn::GenericArgument| matches!(a, syn::GenericArgument::Type(Type::Path(t)) if t.qself.is_none() && t.path.is_ident("Self"));
    let of_self = args.args.len() == 1 && args.args.first().is_some_and(is_self);
    of_self.then_some((borrowed, &r.self_token))
}

/// References to the arguments that stay usable after the body ran, in order.
fn lent_arguments(sig: &Signature) -> Vec<TokenStream> {
    lend(sig, |t| is_copy_primitive(&t.ty))
}

/// A closure fallback's first parameter, on a `self: &Arc<Self>` method: untyped or typed
/// `&Arc<..>` (`&Rc`, `&Box`) takes the receiver as it is written, not the `&Self` inside.
fn takes_receiver_as_written(c: &syn::ExprClosure) -> bool {
    let Some(Pat::Type(t)) = c.inputs.first() else {
        return true;
    };
    let Type::Reference(r) = &*t.ty else {
        return false;
    };
    matches!(&*r.elem, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Arc" || s.ident == "Rc" || s.ident == "Box"))
}

/// Under `#[retry]`: every argument by reference, in order (`#[retry]` refuses patterns,
/// `self` by value and `&mut`, so each is a name the retry clones from and keeps). A
/// `#[cfg]`'d one is lent only if a call without a retry lends it too: if it were the only
/// extra, the two lists would be one list once it is compiled out, and a fallback of it
/// could not tell which it took.
fn every_argument(sig: &Signature) -> Vec<TokenStream> {
    lend(sig, |t| {
        is_copy_primitive(&t.ty) || cfg_attrs(&t.attrs).is_empty()
    })
}

/// `&self`, shared references as they are, and the by-value arguments `by_value` accepts by
/// reference; `&mut` ones and patterns never (the body has them).
fn lend(sig: &Signature, by_value: impl Fn(&syn::PatType) -> bool) -> Vec<TokenStream> {
    sig.inputs
        .iter()
        .filter_map(|input| match input {
            FnArg::Receiver(r) => {
                let this = &r.self_token;
                matches!(&*r.ty, Type::Reference(t) if t.mutability.is_none())
                    .then(|| quote!(#this))
            }
            FnArg::Typed(t) => {
                let Pat::Ident(p) = &*t.pat else { return None };
                if p.by_ref.is_some() || p.subpat.is_some() || is_renamed_pattern(p) {
                    return None;
                }
                let name = &p.ident;
                let cfg = cfg_attrs(&t.attrs);
                match &*t.ty {
                    Type::Reference(r) if r.mutability.is_none() => Some(quote!(#cfg #name)),
                    Type::Reference(_) => None,
                    _ if by_value(t) => Some(quote!(#cfg &#name)),
                    _ => None,
                }
            }
        })
        .collect()
}

/// Numbers, `bool` and `char`: copied, not moved, into the body's `async move`.
fn is_copy_primitive(ty: &Type) -> bool {
    const PRIMITIVES: &[&str] = &[
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
        "f32", "f64", "bool", "char",
    ];
    match ty {
        Type::Path(p) if p.qself.is_none() => p
            .path
            .get_ident()
            .is_some_and(|i| PRIMITIVES.iter().any(|k| i == k)),
        Type::Paren(p) => is_copy_primitive(&p.elem),
        Type::Group(g) => is_copy_primitive(&g.elem),
        _ => false,
    }
}
