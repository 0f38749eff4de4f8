//! `#[retry(...)]` arguments: `attempts`, `backoff`, `backoff_max`, `budget`, `budget_floor`,
//! `retry_on`, `retry_after`, `total`, `idempotent`, `crate`, each optional, each checked
//! here against the runtime's own ranges (`Retry::builder`'s checks, so what compiles builds).

use std::time::Duration;

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Expr, Ident, Token};

use crate::args::{self, Arg, Errors};
use crate::checks;

/// Every key `#[retry]` accepts.
pub const KEYS: &[&str] = &[
    "attempts",
    "backoff",
    "backoff_max",
    "budget",
    "budget_floor",
    "retry_on",
    "retry_after",
    "total",
    "idempotent",
    "crate",
];

/// The runtime's `MAX_ATTEMPTS`: past a handful, retrying only adds load.
const MAX_ATTEMPTS: u64 = 10;

/// Validated `#[retry]` arguments; `None` is the runtime's default.
#[derive(Default)]
pub struct RetryArgs {
    pub attempts: Option<u64>,
    pub backoff: Option<Duration>,
    pub backoff_max: Option<Duration>,
    pub budget: Option<u64>,
    pub budget_floor: Option<u64>,
    pub retry_on: Option<Expr>,
    pub retry_after: Option<Expr>,
    pub total: Option<Duration>,
    pub idempotent: bool,
    pub krate: Option<syn::Path>,
}

impl RetryArgs {
    /// Reads `tokens`; every problem goes to `errors`.
    pub fn from_tokens(tokens: TokenStream, errors: &mut Errors) -> RetryArgs {
        let mut out = RetryArgs::default();
        let list = match parse(tokens) {
            Ok(l) => l,
            Err(e) => {
                errors.push(e);
                return out;
            }
        };
        let mut seen: Vec<String> = Vec::new();
        let mut spans: Vec<(&str, Span)> = Vec::new();
        for arg in &list {
            let key = arg.key.to_string();
            if !KEYS.contains(&key.as_str()) {
                errors.push(checks::unknown(arg, "retry", KEYS));
                continue;
            }
            if seen.contains(&key) {
                errors.push(checks::duplicate(arg));
                continue;
            }
            seen.push(key.clone());
            if let Err(e) = out.read(&key, arg, &mut spans) {
                errors.push(e);
            }
        }
        out.cross_check(&spans, errors);
        out
    }

    fn read(&mut self, key: &str, arg: &Arg, spans: &mut Vec<(&str, Span)>) -> syn::Result<()> {
        match key {
            "attempts" => self.attempts = Some(checks::count(arg, "attempts", MAX_ATTEMPTS)?),
            "backoff" => {
                self.backoff = Some(checks::duration(arg, "backoff")?);
                spans.push(("backoff", span_of(&arg.value)));
            }
            "backoff_max" => {
                self.backoff_max = Some(checks::duration(arg, "backoff_max")?);
                spans.push(("backoff_max", span_of(&arg.value)));
            }
            "budget" => self.budget = Some(percent(arg)?),
            "budget_floor" => self.budget_floor = Some(floor(arg)?),
            "retry_on" => self.retry_on = Some(arg.value.clone()),
            "retry_after" => self.retry_after = Some(arg.value.clone()),
            "total" => self.total = Some(checks::duration(arg, "total")?),
            "idempotent" => self.idempotent = flag(arg)?,
            _ => self.krate = Some(checks::crate_path(arg)?),
        }
        Ok(())
    }

    /// `backoff_max` below `backoff` (given or default) would never let the first wait happen.
    fn cross_check(&self, spans: &[(&str, Span)], errors: &mut Errors) {
        let base = self.backoff.unwrap_or(Duration::from_millis(50));
        let cap = self.backoff_max.unwrap_or(Duration::from_secs(2));
        if cap >= base {
            return;
        }
        let blame = spans.last().map_or_else(Span::call_site, |(_, s)| *s);
        errors.at(
            blame,
            format!(
                "`backoff_max` ({cap:?}) is below `backoff` ({base:?}): the cap must be at least the first wait \
                 (defaults: `backoff = \"50ms\"`, `backoff_max = \"2s\"`)"
            ),
        );
    }
}

fn span_of(e: &Expr) -> Span {
    syn::spanned::Spanned::span(e)
}

/// `budget = 20`: the share of the name's calls that may be retries, in percent.
fn percent(arg: &Arg) -> syn::Result<u64> {
    let what = "a share of calls in percent: an integer from 0 to 100, like `budget = 20`";
    let (v, span) = args::int_lit(arg, what)?;
    if v > 100 {
        return Err(syn::Error::new(
            span,
            format!("`budget` takes {what}, not {v}"),
        ));
    }
    Ok(v)
}

/// `budget_floor = 1`: retries a second allowed whatever the traffic.
fn floor(arg: &Arg) -> syn::Result<u64> {
    let what = "a number of retries per second: an integer from 0 to 1000, like `budget_floor = 1`";
    let (v, span) = args::int_lit(arg, what)?;
    if v > 1000 {
        return Err(syn::Error::new(
            span,
            format!("`budget_floor` takes {what}, not {v}"),
        ));
    }
    Ok(v)
}

/// `idempotent` alone, or `idempotent = true/false`.
fn flag(arg: &Arg) -> syn::Result<bool> {
    match &arg.value {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(b),
            ..
        }) => Ok(b.value),
        other => Err(syn::Error::new_spanned(
            other,
            "`idempotent` is a flag: write `idempotent` (or `idempotent = true`)",
        )),
    }
}

/// `key = value, ...`, where a bare `idempotent` stands for `idempotent = true`.
fn parse(tokens: TokenStream) -> syn::Result<Vec<Arg>> {
    let parser = |input: ParseStream| {
        let mut out = Vec::new();
        while !input.is_empty() {
            let key = Ident::parse_any(input)?;
            let value: Expr = if input.peek(Token![=]) {
                input.parse::<Token![=]>()?;
                input.parse()?
            } else if key == "idempotent" {
                syn::parse_quote_spanned!(key.span()=> true)
            } else {
                return Err(syn::Error::new(
                    key.span(),
                    format!("`{key}` needs a value: write `#[retry({key} = ...)]`"),
                ));
            };
            out.push(Arg { key, value });
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(out)
    };
    parser.parse2(tokens)
}
