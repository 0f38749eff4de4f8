//! Phase 1, attributes: which fusebox attributes are on the function, and their arguments.
//!
//! When several of `#[breaker]`, `#[bulkhead]` and `#[retry]` are on a function, the outer one
//! (the one rustc expands first) takes the others' arguments, so all compose into one wrapper
//! in one fixed order (retry outermost, then breaker, then bulkhead) whatever order they are
//! written in, and leaves a marker in its place: the inner attribute still expands (so
//! `use fusebox::bulkhead` counts as used) and returns the function as is.

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::{Attribute, Meta};

use crate::args::{self, Errors};
use crate::ast::Function;
use crate::breaker_args::BreakerArgs;
use crate::bulkhead_args::BulkheadArgs;
use crate::retry_args::RetryArgs;

/// Which attribute.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Breaker,
    Bulkhead,
    Retry,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Breaker => "breaker",
            Kind::Bulkhead => "bulkhead",
            Kind::Retry => "retry",
        }
    }
}

/// What the outer attribute leaves in place of the inner one it took.
const COMPOSED: &str = "__fusebox_composed";

/// Whether `attr` is the marker: this attribute was taken by the other one.
pub fn is_composed_marker(attr: &TokenStream) -> bool {
    let mut tokens = attr.clone().into_iter();
    matches!(
        (tokens.next(), tokens.next()),
        (Some(TokenTree::Ident(i)), None) if i == COMPOSED
    )
}

/// The argument tokens of each attribute on the function, with the span blamed when a
/// required argument is missing.
#[derive(Default)]
pub struct Attrs {
    breaker: Option<(TokenStream, Span)>,
    bulkhead: Option<(TokenStream, Span)>,
    retry: Option<(TokenStream, Span)>,
}

/// The arguments of both attributes, read (phase 1 ends here).
pub struct Args {
    pub breaker: Option<BreakerArgs>,
    pub bulkhead: Option<BulkheadArgs>,
    pub retry: Option<RetryArgs>,
}

impl Attrs {
    /// Takes the fusebox attributes off `func`: `kind`'s own `tokens`, and the other one's
    /// from `func.attrs`, where a marker replaces it. A repeated attribute is an error.
    pub fn take(
        kind: Kind,
        tokens: TokenStream,
        func: &mut Function,
        errors: &mut Errors,
    ) -> Attrs {
        let mut found = Attrs::default();
        *found.slot(kind) = Some((tokens, Span::call_site()));
        let mut kept = Vec::with_capacity(func.attrs.len());
        for a in std::mem::take(&mut func.attrs) {
            match fusebox_attr(&a) {
                Some(other) => found.take_one(kind, other, a, &mut kept, errors),
                None => kept.push(a),
            }
        }
        func.attrs = kept;
        found
    }

    fn take_one(
        &mut self,
        kind: Kind,
        found: Kind,
        a: Attribute,
        kept: &mut Vec<Attribute>,
        errors: &mut Errors,
    ) {
        let slot = self.slot(found);
        if slot.is_some() {
            errors.push(syn::Error::new_spanned(
                &a.meta,
                format!(
                    "`#[{0}]` is given twice on this function; merge the arguments into one `#[{0}(...)]`",
                    found.name()
                ),
            ));
            return;
        }
        if found != kind {
            let path = a.path();
            let marker = syn::Ident::new(COMPOSED, Span::call_site());
            kept.push(syn::parse_quote!(#[#path(#marker)]));
        }
        match &a.meta {
            Meta::Path(p) => *slot = Some((TokenStream::new(), p.span())),
            Meta::List(l) => *slot = Some((l.tokens.clone(), l.path.span())),
            Meta::NameValue(nv) => errors.push(syn::Error::new_spanned(
                nv,
                format!("write `#[{}(key = value, ...)]`", found.name()),
            )),
        }
    }

    fn slot(&mut self, kind: Kind) -> &mut Option<(TokenStream, Span)> {
        match kind {
            Kind::Breaker => &mut self.breaker,
            Kind::Bulkhead => &mut self.bulkhead,
            Kind::Retry => &mut self.retry,
        }
    }

    /// Reads each attribute's arguments; every problem goes to `errors`.
    pub fn parse(self, errors: &mut Errors) -> Args {
        Args {
            breaker: self.breaker.map(|(tokens, _)| {
                BreakerArgs::from_args(&list(tokens, Kind::Breaker, errors), errors)
            }),
            bulkhead: self.bulkhead.map(|(tokens, span)| {
                match args::parse(tokens, Kind::Bulkhead.name()) {
                    Ok(list) => BulkheadArgs::from_args(&list, span, errors),
                    // A list that does not parse is one mistake: its keys are unread, so
                    // `pool` is not reported missing too.
                    Err(e) => {
                        errors.push(e);
                        BulkheadArgs::from_args(&[], span, &mut Errors::default())
                    }
                }
            }),
            retry: self.retry.map(|(tokens, span)| {
                match args::parse(tokens, Kind::Retry.name()) {
                    Ok(list) => RetryArgs::from_args(&list, span, errors),
                    // A list that does not parse is one mistake: nothing of it is judged.
                    Err(e) => {
                        errors.push(e);
                        RetryArgs::default()
                    }
                }
            }),
        }
    }
}

/// The `key = value` list; a syntax error stops it (the keys read so far are dropped too).
fn list(tokens: TokenStream, kind: Kind, errors: &mut Errors) -> Vec<args::Arg> {
    args::parse(tokens, kind.name()).unwrap_or_else(|e| {
        errors.push(e);
        Vec::new()
    })
}

/// Which fusebox attribute `a` is, by its last path segment (`bulkhead`, `fusebox::bulkhead`).
fn fusebox_attr(a: &Attribute) -> Option<Kind> {
    let last = a.path().segments.last()?;
    match last.ident.to_string().as_str() {
        "breaker" => Some(Kind::Breaker),
        "bulkhead" => Some(Kind::Bulkhead),
        "retry" => Some(Kind::Retry),
        _ => None,
    }
}
