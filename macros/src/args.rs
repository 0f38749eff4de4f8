//! The raw `key = value, ...` list of an attribute, before any key is interpreted.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit, Token};

/// One `key = value` pair.
pub struct Arg {
    pub key: Ident,
    pub value: Expr,
}

/// Collects every error of one expansion, so a user sees them all at once.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    pub fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }
    pub fn at(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.push(syn::Error::new(span, msg));
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }
    /// Every message, in order (for tests that compare them with the settings crate's).
    #[cfg(test)]
    pub fn messages(&self) -> Vec<String> {
        self.0
            .iter()
            .flat_map(|all| all.clone().into_iter().map(|e| e.to_string()))
            .collect()
    }
    pub fn to_compile_errors(&self) -> TokenStream {
        self.0
            .as_ref()
            .map(syn::Error::to_compile_error)
            .unwrap_or_default()
    }
}

/// Parses `key = value, ...`; a syntax error stops the list (there is no sensible next key).
pub fn parse(tokens: TokenStream, attr: &str) -> syn::Result<Vec<Arg>> {
    let attr = attr.to_owned();
    let parser = move |input: ParseStream| {
        let mut args = Vec::new();
        while !input.is_empty() {
            // `Ident::parse_any` also accepts keywords, so `crate = ...` gets a helpful error.
            let key = Ident::parse_any(input).map_err(|e| {
                // `#[breaker("payments")]`: a value without its key.
                let example = if attr == "bulkhead" {
                    "pool = 60"
                } else {
                    "name = \"payments\""
                };
                syn::Error::new(
                    e.span(),
                    format!(
                        "`#[{attr}]` takes `key = value` arguments, like `#[{attr}({example})]`"
                    ),
                )
            })?;
            if !input.peek(Token![=]) {
                return Err(syn::Error::new(
                    key.span(),
                    format!("`{key}` needs a value: write `#[{attr}({key} = ...)]`"),
                ));
            }
            let eq = input.parse::<Token![=]>()?;
            let percent_key =
                ["failure_rate", "slow_rate", "half_open_pct"].contains(&&*key.to_string());
            if let Some((percent, number)) = trailing_percent(input).filter(|_| percent_key) {
                return Err(syn::Error::new(
                    percent,
                    format!("`{key}` is a percent written as a bare number, without `%`: write `#[{attr}({key} = {number})]`"),
                ));
            }
            // A value cut short (`key = ,` or `rate = 50%`) ends the list; syn would blame the
            // whole attribute, so the error points at the argument instead.
            let value: Expr = input.parse().map_err(|e| {
                let msg = e.to_string();
                if msg.starts_with("unexpected end of input") || input.peek(Token![,]) {
                    syn::Error::new(
                        eq.span,
                        format!("`{key}` has no complete value after `=`: write `#[{attr}({key} = ...)]`"),
                    )
                } else {
                    e
                }
            })?;
            args.push(Arg {
                key,
                value: ungroup(value),
            });
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(args)
    };
    parser.parse2(tokens)
}

/// The `%` that ends the value ahead (`rate = 50%`), if it does, and what came before it: a
/// percent written the way people write percents is told where the `%` is, rather than that
/// the value is incomplete.
fn trailing_percent(input: ParseStream) -> Option<(Span, String)> {
    let fork = input.fork();
    let (mut before, mut last) = (None, None);
    while !fork.is_empty() && !fork.peek(Token![,]) {
        match fork.parse::<proc_macro2::TokenTree>() {
            Ok(t) => before = last.replace(t),
            Err(_) => break,
        }
    }
    match (before, last) {
        (Some(n), Some(proc_macro2::TokenTree::Punct(p))) if p.as_char() == '%' => {
            Some((p.span(), n.to_string()))
        }
        _ => None,
    }
}

/// `value` without the invisible group `macro_rules!` puts around a `$x:literal` or `$x:expr`
/// it substitutes: `#[breaker(name = $name)]` in a macro is the literal the user passed.
pub fn ungroup(value: Expr) -> Expr {
    match value {
        Expr::Group(g) => ungroup(*g.expr),
        other => other,
    }
}

/// The string literal of `arg`, or an error saying what was expected.
pub fn str_lit(arg: &Arg, what: &str) -> syn::Result<(String, Span)> {
    match &arg.value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok((s.value(), s.span())),
        other => Err(syn::Error::new(
            other.span(),
            format!("`{}` takes {what}", arg.key),
        )),
    }
}

/// The unsigned integer literal of `arg`.
pub fn int_lit(arg: &Arg, what: &str) -> syn::Result<(u64, Span)> {
    let err = |span| syn::Error::new(span, format!("`{}` takes {what}", arg.key));
    match &arg.value {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => i
            .base10_parse::<u64>()
            .map(|v| (v, i.span()))
            .map_err(|_| err(i.span())),
        other => Err(err(other.span())),
    }
}

/// The closest valid key to a misspelt one (the settings crate's, so text suggests alike).
pub use fusebox_settings::suggest;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_only_near_misses() {
        let valid = ["timeout", "half_open_pct", "fallback"];
        assert_eq!(suggest("timout", &valid), Some("timeout"));
        assert_eq!(suggest("half_open_percent", &valid), Some("half_open_pct"));
        assert_eq!(suggest("colour", &valid), None);
    }
}
