//! Phase 2 for `#[retry]`: the function rules a retry adds. Each attempt runs the body again,
//! so each argument must be re-bindable by name (a fresh clone per attempt), and the body
//! must return something a retry can judge.

use syn::spanned::Spanned;
use syn::{FnArg, Pat, Type};

use crate::args::Errors;
use crate::ast::Function;
use crate::retry_args::RetryArgs;
use crate::shape::is_renamed_pattern;
use crate::signature::Output;

/// Checks `func` for `#[retry]` (an `async fn` or the boxed future `#[async_trait]` leaves:
/// each attempt makes that future again); `guarded` says whether a breaker or bulkhead is
/// beside it, whose own check says what a body that does not return a `Result` needs.
pub fn check(func: &Function, out: &Output, r: &RetryArgs, guarded: bool, errors: &mut Errors) {
    if !out.is_result && !guarded {
        let advice = if out.result_like {
            // An alias: nesting it in a `Result` is not the fix.
            out.result_like_note()
        } else {
            format!(": return `Result<{}, E>`", out.shown)
        };
        errors.at(
            out.span,
            format!(
                "`#[retry]` retries the `Err`s of the function, and this function returns `{}`{advice}",
                out.shown
            ),
        );
    }
    for (hook, name) in [(&r.retry_on, "retry_on"), (&r.retry_after, "retry_after")] {
        if let (Some(h), false) = (hook, out.is_result) {
            errors.at(
                h.span(),
                format!(
                    "`{name}` reads `Err` values, but this function returns `{}`, not a `Result`",
                    out.shown
                ),
            );
        }
    }
    arguments(func, errors);
}

/// Every argument is bound again per attempt: by name, `&self` or a clone of a value.
fn arguments(func: &Function, errors: &mut Errors) {
    for input in &func.sig.inputs {
        match input {
            // By its type, not its spelling: `self: &Arc<Self>` is a shared reference like
            // `&self`, and `self: Arc<Self>` is by value like `self`.
            FnArg::Receiver(r) => match &*r.ty {
                Type::Reference(t) if t.mutability.is_none() => {}
                Type::Reference(_) => errors.at(
                    r.self_token.span,
                    "`#[retry]` runs the body once per attempt and cannot lend `&mut self` to each: take `&self`",
                ),
                _ => errors.at(
                    r.self_token.span,
                    "`#[retry]` runs the body once per attempt and cannot rebind `self` taken by value: \
                     take `&self` (or `self: &Arc<Self>`, and clone the handle where the body needs one)",
                ),
            },
            FnArg::Typed(t) => {
                if let Type::Reference(re) = &*t.ty {
                    if re.mutability.is_some() {
                        errors.push(syn::Error::new_spanned(
                            &t.ty,
                            "`#[retry]` runs the body once per attempt and cannot lend a `&mut` argument \
                             to each: take it by value (cloned per attempt) or by shared reference",
                        ));
                        continue;
                    }
                }
                let named = matches!(&*t.pat, Pat::Ident(p) if p.subpat.is_none() && !is_renamed_pattern(p));
                if !named || !t.attrs.iter().all(crate::tokens::is_cfg) {
                    errors.at(
                        t.pat.span(),
                        "`#[retry]` clones each argument for every attempt, by name, and this argument is a \
                         pattern or has attributes other than `#[cfg]`: give it a plain name and destructure it in the body",
                    );
                }
            }
        }
    }
}
