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

/// What an attribute's list allows beyond `key = value`, and the words of its errors: the one
/// grammar of `#[breaker]`, `#[bulkhead]` and `#[retry]` differs between them only here.
struct Grammar {
    attr: &'static str,
    /// One argument of the attribute, shown when a value comes without its key.
    example: &'static str,
    /// Keys that may stand alone for `key = true` (`#[retry(idempotent)]`).
    flags: &'static [&'static str],
    /// Keys whose value is a percent, so `key = 50%` is told where the `%` is (the settings
    /// table's percentages, held to it by a test below).
    percent: &'static [&'static str],
}

const GRAMMARS: [Grammar; 3] = [
    Grammar {
        attr: "breaker",
        example: "name = \"payments\"",
        flags: &[],
        percent: &["failure_rate", "slow_rate", "half_open_pct"],
    },
    Grammar {
        attr: "bulkhead",
        example: "pool = 60",
        flags: &[],
        percent: &[],
    },
    Grammar {
        attr: "retry",
        example: "attempts = 3",
        flags: &["idempotent", "hold_open"],
        percent: &["budget"],
    },
];

fn grammar(attr: &str) -> &'static Grammar {
    GRAMMARS
        .iter()
        .find(|g| g.attr == attr)
        .expect("an attribute of fusebox")
}

/// Parses `key = value, ...` of the attribute `attr` (`"breaker"`, `"bulkhead"`, `"retry"`);
/// a syntax error stops the list (there is no sensible next key).
pub fn parse(tokens: TokenStream, attr: &str) -> syn::Result<Vec<Arg>> {
    let grammar = grammar(attr);
    let attr = grammar.attr;
    let parser = move |input: ParseStream| {
        let mut args = Vec::new();
        while !input.is_empty() {
            // `Ident::parse_any` also accepts keywords, so `crate = ...` gets a helpful error.
            let key = Ident::parse_any(input).map_err(|e| {
                // `#[breaker("payments")]`: a value without its key.
                syn::Error::new(
                    e.span(),
                    format!(
                        "`#[{attr}]` takes `key = value` arguments, like `#[{attr}({})]`",
                        grammar.example
                    ),
                )
            })?;
            let value = value(input, &key, grammar)?;
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

/// The value after `key`: `= expr`, or `true` for a flag standing alone.
fn value(input: ParseStream, key: &Ident, grammar: &Grammar) -> syn::Result<Expr> {
    let attr = grammar.attr;
    let name = key.to_string();
    if !input.peek(Token![=]) {
        if grammar.flags.contains(&name.as_str()) {
            return Ok(syn::parse_quote_spanned!(key.span()=> true));
        }
        return Err(syn::Error::new(
            key.span(),
            format!("`{key}` needs a value: write `#[{attr}({key} = ...)]`"),
        ));
    }
    let eq = input.parse::<Token![=]>()?;
    if let Some((percent, number)) = trailing_percent(input) {
        // At the `%` either way: the value is whole, the `%` is the mistake.
        let msg = if grammar.percent.contains(&name.as_str()) {
            format!("`{key}` is a percent written as a bare number, without `%`: write `#[{attr}({key} = {number})]`")
        } else {
            format!("`{key}` is not a percent of `#[{attr}]`: drop the `%`")
        };
        return Err(syn::Error::new(percent, msg));
    }
    // A value cut short (`key = ,` or `rate = 50%`) ends the list; syn would blame the whole
    // attribute, so the error points at the argument instead.
    input.parse().map_err(|e| {
        let msg = e.to_string();
        if msg.starts_with("unexpected end of input") || input.peek(Token![,]) {
            syn::Error::new(
                eq.span,
                format!("`{key}` has no complete value after `=`: write `#[{attr}({key} = ...)]`"),
            )
        } else {
            e
        }
    })
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

    /// Each attribute's percent keys (told to drop a `%`) are the settings table's
    /// percentages of that attribute, so a new one cannot be missed.
    #[test]
    fn percent_keys_are_the_percentages_of_the_table() {
        use fusebox_settings::{Key, BREAKER_KEYS, BULKHEAD_KEYS, RETRY_KEYS};
        let lists: [(&str, &[&str]); 3] = [
            ("breaker", &BREAKER_KEYS),
            ("bulkhead", &BULKHEAD_KEYS),
            ("retry", &RETRY_KEYS),
        ];
        for (attr, keys) in lists {
            // `backoff` is a key of both the breaker and the retry.
            let key = |k: &str| match attr {
                "retry" => Key::retry_from_name(k),
                _ => Key::from_name(k),
            };
            let percent: Vec<&str> = keys
                .iter()
                .copied()
                .filter(|k| key(k).expect(k).expected().starts_with("a percentage"))
                .collect();
            assert_eq!(grammar(attr).percent, percent, "{attr}");
        }
        assert_eq!(grammar("retry").percent, ["budget"]);
    }
}
