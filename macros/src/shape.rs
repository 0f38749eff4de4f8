//! What an attribute is on: an `async fn`, or the shape `#[async_trait]` leaves of one.
//!
//! async-trait expands before the attributes on the methods of its impl, so they receive
//! `fn f(&self, ..) -> Pin<Box<dyn Future<Output = R> + Send + 'async_trait>>` whose body is
//! `Box::pin(async move { .. })`. Like tracing's `#[instrument]` (`AsyncInfo::from_fn`), the
//! attributes recognise that shape and wrap the inner async block, so `R` is what they guard.

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::Parser;
use syn::{
    Attribute, Block, Expr, ExprAsync, GenericArgument, PatIdent, PathArguments, ReturnType, Stmt,
    Token, Type, TypeParamBound,
};

use crate::ast::Function;

/// The future the attribute wraps.
pub enum Shape {
    /// `async fn f(..) -> R { body }`: the body is the future's.
    Async,
    /// `fn f(..) -> Pin<Box<dyn Future<Output = R> ..>> { before; Box::pin(async move { body }) }`.
    Boxed(Box<Boxed>),
}

/// The pieces of a boxed future that the expansion keeps around its own code.
pub struct Boxed {
    /// Statements before the `Box::pin(..)`, kept in place.
    pub before: Vec<Stmt>,
    /// The `Box::pin` path as written.
    pub pin: Expr,
    /// Attributes on the async block.
    pub attrs: Vec<Attribute>,
    /// `move`, if the async block had it.
    pub capture: Option<Token![move]>,
    /// The async block's statements: what the call runs.
    pub body: TokenStream,
    /// `R` of `Future<Output = R>`.
    pub output: Type,
}

impl Shape {
    /// The statements of the user's future, as tokens.
    pub fn body(&self, func: &Function) -> TokenStream {
        match self {
            Shape::Async => func.body.clone(),
            Shape::Boxed(b) => b.body.clone(),
        }
    }
}

/// The shape of `func`, or `None` when it is neither an `async fn` nor a boxed async block.
/// An `async fn`'s body is not parsed (it may not parse yet); a boxed one is async-trait's
/// output, which does.
pub fn read(func: &Function) -> Option<Shape> {
    if func.sig.asyncness.is_some() {
        return Some(Shape::Async);
    }
    let output = boxed_output(&func.sig.output)?.clone();
    let mut stmts = Block::parse_within.parse2(func.body.clone()).ok()?;
    // The last statement is the value: `Box::pin(async move { .. })` (no `;`).
    let Some(Stmt::Expr(Expr::Call(call), None)) = stmts.pop() else {
        return None;
    };
    let Expr::Path(path) = &*call.func else {
        return None;
    };
    let segments: Vec<_> = path.path.segments.iter().map(|s| &s.ident).collect();
    if !matches!(segments.as_slice(), [.., b, p] if *b == "Box" && *p == "pin")
        || call.args.len() != 1
    {
        return None;
    }
    let Some(Expr::Async(ExprAsync {
        attrs,
        capture,
        block,
        ..
    })) = call.args.into_iter().next()
    else {
        return None;
    };
    let body = &block.stmts;
    Some(Shape::Boxed(Box::new(Boxed {
        before: stmts,
        pin: *call.func,
        attrs,
        capture,
        body: quote!(#(#body)*),
        output,
    })))
}

/// `R` of a return type `Pin<Box<dyn Future<Output = R> + ..>>` (any path to each of them).
fn boxed_output(ret: &ReturnType) -> Option<&Type> {
    let ReturnType::Type(_, ty) = ret else {
        return None;
    };
    let boxed = only_type_argument(ty, "Pin")?;
    let Type::TraitObject(object) = only_type_argument(boxed, "Box")? else {
        return None;
    };
    object.bounds.iter().find_map(|bound| {
        let TypeParamBound::Trait(t) = bound else {
            return None;
        };
        let last = t.path.segments.last()?;
        if last.ident != "Future" {
            return None;
        }
        let PathArguments::AngleBracketed(args) = &last.arguments else {
            return None;
        };
        args.args.iter().find_map(|a| match a {
            GenericArgument::AssocType(assoc) if assoc.ident == "Output" => Some(&assoc.ty),
            _ => None,
        })
    })
}

/// `T` of `name<T>` (by the last path segment).
fn only_type_argument<'t>(ty: &'t Type, name: &str) -> Option<&'t Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        GenericArgument::Type(t) if args.args.len() == 1 => Some(t),
        _ => None,
    }
}

/// An argument async-trait renamed from a pattern (`(a, b): (A, B)` becomes `__arg1`): it
/// stands for the user's pattern, so it is neither lent to a fallback nor part of a stale key,
/// exactly as the pattern is on an `async fn`.
pub fn is_renamed_pattern(p: &PatIdent) -> bool {
    let name = p.ident.to_string();
    name.strip_prefix("__arg")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}
