//! What the wrapper needs to know about the user's signature, read without changing it.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;
use syn::{ReturnType, Type};

use crate::ast::Function;
use crate::shape::Shape;

/// The declared return type, as the generated code may name it.
pub struct Output {
    /// The type with any `impl Trait` replaced by `_` (a `let` cannot name an opaque type).
    pub ty: TokenStream,
    /// Where type errors about the return value should point: the type, or the fn name.
    pub span: Span,
    /// Written as a `Result` (`Result<T, E>`, `io::Result<T>`, `anyhow::Result<T>`...).
    pub is_result: bool,
    /// How the type reads in an error message.
    pub shown: String,
}

/// Reads the return type of `func`: its declared one, or `R` of the boxed future it returns.
pub fn output(func: &Function, shape: &Shape) -> Output {
    match (shape, &func.sig.output) {
        (Shape::Boxed(b), _) => of_type(&b.output),
        (Shape::Async, ReturnType::Type(_, ty)) => of_type(ty),
        (Shape::Async, ReturnType::Default) => Output {
            ty: quote!(()),
            span: func.sig.ident.span(),
            is_result: false,
            shown: "()".into(),
        },
    }
}

fn of_type(ty: &Type) -> Output {
    Output {
        ty: if mentions_impl(ty.to_token_stream()) {
            quote!(_)
        } else {
            ty.to_token_stream()
        },
        span: ty.span(),
        is_result: is_result(ty),
        shown: ty
            .to_token_stream()
            .to_string()
            .replace(" < ", "<")
            .replace(" >", ">")
            .replace(" ,", ","),
    }
}

/// A path type whose last segment is `Result` or ends in it (type aliases like `io::Result<T>`).
fn is_result(ty: &Type) -> bool {
    match ty {
        Type::Path(p) => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident.to_string().ends_with("Result")),
        Type::Paren(p) => is_result(&p.elem),
        Type::Group(g) => is_result(&g.elem),
        _ => false,
    }
}

fn mentions_impl(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == "impl",
        TokenTree::Group(g) => mentions_impl(g.stream()),
        _ => false,
    })
}
