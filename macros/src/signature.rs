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
    /// Written as a `Result` (see [`is_result`]).
    pub is_result: bool,
    /// Named like a `Result` without being one by its path (`SearchResult`): the error
    /// about a missing `Result` says why it was not taken for one.
    pub result_like: bool,
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
            result_like: false,
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
        result_like: !is_result(ty) && last_ident(ty).is_some_and(|i| i.ends_with("Result")),
        shown: ty
            .to_token_stream()
            .to_string()
            .replace(" < ", "<")
            .replace(" >", ">")
            .replace(" ,", ","),
    }
}

/// A `Result`, recognised by its path: the last segment is `Result` itself. That is
/// `Result<T, E>`, `std::result::Result` and `core::result::Result`, and the aliases named
/// `Result` that crates and modules define by convention (`io::Result<T>`, `fmt::Result`,
/// `anyhow::Result<T>`): a macro sees names, not types, and a type named `Result` that is not
/// one would fail to compile against the generated `Ok(..)`, at the return type. A type that
/// is only named like one (`SearchResult`) is a value. An alias under another name is not
/// seen through: without a fallback the error says to write the `Result` it stands for, and
/// with one the expansion probes the type (`expand::alias_guard`), so the alias is a type error
/// at the return type rather than a `Result` whose `Err`s silently count as successes.
pub fn is_result(ty: &Type) -> bool {
    last_ident(ty).is_some_and(|i| i == "Result")
}

/// The last path segment of a path type (through parentheses and invisible groups).
fn last_ident(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        Type::Paren(p) => last_ident(&p.elem),
        Type::Group(g) => last_ident(&g.elem),
        _ => None,
    }
}

fn mentions_impl(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == "impl",
        TokenTree::Group(g) => mentions_impl(g.stream()),
        _ => false,
    })
}

impl Output {
    /// Why a type named like a `Result` was not taken for one (empty for any other).
    pub fn result_like_note(&self) -> String {
        if !self.result_like {
            return String::new();
        }
        format!(
            " (`{}` is not read as a `Result`: the attribute sees names, not types, and takes only \
             `Result` or a path ending in `::Result` for one; if it is an alias of a `Result`, write \
             the `Result<T, E>` it stands for)",
            self.shown
        )
    }
}
