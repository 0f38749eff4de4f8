//! Phase 2, validation: the rules on the function itself, once its arguments are read.
//!
//! The function must be a future ([`Shape`]); then its return type must carry a rejection
//! (or a fallback answer it), and `stale_for` must be able to key values by its arguments.
//! What comes out is [`Valid`]: everything `expand` needs, and nothing it must check again.

use syn::spanned::Spanned;
use syn::{FnArg, Pat, Signature};

use crate::args::Errors;
use crate::ast::Function;
use crate::attr::{Args, Kind};
use crate::breaker_args::BreakerArgs;
use crate::bulkhead_args::BulkheadArgs;
use crate::retry_args::RetryArgs;
use crate::shape::{self, is_renamed_pattern, Shape};
use crate::signature::{self, Output};

/// A function and arguments that passed every check: the input of `expand`.
pub struct Valid<'f> {
    pub func: &'f Function,
    pub shape: Shape,
    pub out: Output,
    pub breaker: Option<BreakerArgs>,
    pub bulkhead: Option<BulkheadArgs>,
    pub retry: Option<RetryArgs>,
}

/// Checks `func` against `args`; `errors` already holds the arguments' own errors, and any
/// error (theirs or the function's) means nothing expands.
pub fn validate(
    kind: Kind,
    func: &Function,
    args: Args,
    mut errors: Errors,
) -> Result<Valid<'_>, Errors> {
    let Some(shape) = shape::read(func) else {
        // Not a future: the one error says so, and nothing about the return type follows.
        errors.at(func.sig.fn_token.span, not_a_future(kind, &func.sig));
        return Err(errors);
    };
    let out = signature::output(func, &shape);
    let breaker = args.breaker.as_ref();
    if let Some(r) = &args.retry {
        // A breaker or bulkhead beside it says what a body that is not a `Result` needs
        // (a `Result`, or a fallback): one error for the one mistake.
        let guarded = breaker.is_some() || args.bulkhead.is_some();
        crate::retry_checks::check(func, &out, r, guarded, &mut errors);
    }
    // A retry alone has said what it needs above.
    if breaker.is_some() || args.bulkhead.is_some() {
        return_type(&out, breaker, &mut errors);
    }
    if let Some(b) = breaker {
        stale(&func.sig, b, &mut errors);
        failure(&out, b, &mut errors);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Valid {
        func,
        shape,
        out,
        breaker: args.breaker,
        bulkhead: args.bulkhead,
        retry: args.retry,
    })
}

fn not_a_future(kind: Kind, sig: &Signature) -> String {
    format!(
        "`#[{}]` goes on an `async fn` (also in an `#[async_trait]` impl): it admits, times and \
         limits a future; write `async fn {}(...)`",
        kind.name(),
        sig.ident
    )
}

/// A rejected or timed-out call must return something: an `Err`, or the fallback's answer.
fn return_type(out: &Output, breaker: Option<&BreakerArgs>, errors: &mut Errors) {
    let fallback = breaker.and_then(|b| b.fallback.as_ref()).is_some();
    if out.is_result || fallback {
        return;
    }
    let ty = &out.shown;
    let msg = match breaker {
        Some(_) => format!(
            "`#[breaker]` without `fallback` needs a `Result` return type, and this function returns `{ty}`: \
             a rejected or timed-out call must return something. Return `Result<{ty}, E>` with \
             `E: From<fusebox::Rejection>`, or add `fallback = path` to answer with a `{ty}`"
        ),
        None => format!(
            "`#[bulkhead]` needs a `Result` return type, and this function returns `{ty}`: a call refused \
             by a full pool returns `Err(E::from(fusebox::Rejection))`. Return `Result<{ty}, E>`, or add \
             `#[breaker(fallback = path)]` to answer with a `{ty}`"
        ),
    };
    errors.at(out.span, msg + &out.result_like_note());
}

/// `failure`, `ignore` and `failure_if_ok` judge a `Result`'s values, so they need one.
fn failure(out: &Output, b: &BreakerArgs, errors: &mut Errors) {
    if out.is_result {
        return;
    }
    let judges = [
        (&b.failure, "`failure` decides which `Err` values count"),
        (&b.ignore, "`ignore` decides which `Err` values are ignored"),
        (
            &b.failure_if_ok,
            "`failure_if_ok` decides which `Ok` values are failures",
        ),
    ];
    for (f, what) in judges {
        if let Some(f) = f {
            errors.at(
                f.span(),
                format!(
                    "{what}, but this function returns `{}`, not a `Result`",
                    out.shown
                ),
            );
        }
    }
}

/// `stale_for` keys values by the arguments (each needs a name), or by `stale_key`, which a
/// method must give.
fn stale(sig: &Signature, b: &BreakerArgs, errors: &mut Errors) {
    if b.stale_for.is_none() {
        return;
    }
    if b.stale_key.is_none() {
        stale_arguments(sig, errors);
    }
    stale_receiver(sig, b, errors);
}

/// Without `stale_key`, every argument but `self` is part of the key, so each needs a name.
fn stale_arguments(sig: &Signature, errors: &mut Errors) {
    for input in &sig.inputs {
        let FnArg::Typed(t) = input else { continue };
        // A `#[cfg]` goes with the argument into the key; any other attribute may rename or
        // rewrite it, so the key cannot be built from it.
        if !t.attrs.iter().all(crate::tokens::is_cfg) {
            errors.at(
                t.span(),
                "`stale_for` keys the last good values by the arguments, and an argument with attributes \
                 (other than `#[cfg]`) cannot be part of that key; choose the key with `stale_key = expr`",
            );
        } else if !matches!(&*t.pat, Pat::Ident(p) if p.subpat.is_none() && !is_renamed_pattern(p))
        {
            errors.at(
                t.pat.span(),
                "`stale_for` keys the last good values by the arguments, by name, and this argument is a pattern; \
                 give it a name, or choose the key with `stale_key = expr`",
            );
        }
    }
}

/// A method's last good values depend on `self` (a tenant, a region, a client) that the
/// default key cannot see, so one instance's value would be served to another's callers:
/// a method with `stale_for` must say what its values depend on.
fn stale_receiver(sig: &Signature, b: &BreakerArgs, errors: &mut Errors) {
    if b.stale_key.is_some() {
        return;
    }
    let Some(FnArg::Receiver(r)) = sig.inputs.first() else {
        return;
    };
    let first = sig.inputs.iter().find_map(|i| match i {
        FnArg::Typed(t) => match &*t.pat {
            Pat::Ident(p) => Some(p.ident.to_string()),
            _ => None,
        },
        FnArg::Receiver(_) => None,
    });
    let example = match first {
        Some(arg) => format!("`stale_key = (self.tenant, {arg})`"),
        None => "`stale_key = self.tenant`".to_owned(),
    };
    errors.at(
        r.self_token.span,
        format!(
            "a method with `stale_for` must name `stale_key`: the default key leaves `self` out, so one \
             instance's (one tenant's) last good value would be served to another's callers; \
             name what the value depends on, like {example}"
        ),
    );
}
