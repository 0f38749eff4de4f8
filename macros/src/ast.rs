//! Phase 1, syntax: the item an attribute is on, read as a function whose body stays tokens.
//!
//! Only the signature is parsed. The body is kept as written (like tokio-macros and
//! tracing-attributes do), so a body that does not parse yet, while the user types, still
//! expands: rustc then reports the user's own syntax error, once, and rust-analyzer still has
//! an expansion to work with.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::{braced, token, Attribute, Signature, Visibility};

/// A function with a body: `#[attrs] vis fn sig { #![inner] body }`.
pub struct Function {
    /// Its outer attributes (the other fusebox attribute among them, until `attr` takes it).
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub sig: Signature,
    brace: token::Brace,
    /// The body's inner attributes (`#![allow(..)]`), which must stay first in the body.
    pub inner_attrs: Vec<Attribute>,
    /// The body's statements, as tokens.
    pub body: TokenStream,
}

impl Parse for Function {
    fn parse(input: ParseStream) -> syn::Result<Function> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig = input.parse()?;
        let content;
        let brace = braced!(content in input);
        let inner_attrs = content.call(Attribute::parse_inner)?;
        let body = content.parse()?;
        Ok(Function {
            attrs,
            vis,
            sig,
            brace,
            inner_attrs,
            body,
        })
    }
}

impl Function {
    /// The function with `body` in place of its own. The new braces are the attribute's
    /// (call-site), as before bodies were kept as tokens: lints that skip macro output (such
    /// as clippy's `missing_errors_doc`) keep treating the wrapped function as generated.
    pub fn with_body(&self, body: TokenStream) -> TokenStream {
        self.write(token::Brace::default(), body)
    }

    fn write(&self, brace: token::Brace, body: TokenStream) -> TokenStream {
        let mut out = TokenStream::new();
        out.extend(self.attrs.iter().map(ToTokens::to_token_stream));
        self.vis.to_tokens(&mut out);
        self.sig.to_tokens(&mut out);
        brace.surround(&mut out, |out| {
            out.extend(self.inner_attrs.iter().map(ToTokens::to_token_stream));
            out.extend(body);
        });
        out
    }
}

/// The function as written (with the attributes `attr` left it): what an error keeps, so one
/// mistake gives one error and IDEs still see the function.
impl ToTokens for Function {
    fn to_tokens(&self, out: &mut TokenStream) {
        out.extend(self.write(self.brace, self.body.clone()));
    }
}
