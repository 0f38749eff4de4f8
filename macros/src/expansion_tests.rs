//! The README shows the expansion of DESIGN.md's example; this keeps it true, token for token.

use quote::quote;

use crate::{entry, Kind};

/// The example of the README's "What the attributes generate", formatted by prettyplease.
fn example() -> String {
    let tokens = entry(
        Kind::Breaker,
        quote!(
            name = "payments",
            trip_p95 = "500ms",
            half_open_pct = 5,
            fallback = confirm_by_email
        ),
        quote! {
            #[bulkhead(pool = 60)]
            async fn verify_payment(order: &Order) -> Result<Verification, PayError> {
                gateway().verify(order).await
            }
        },
    );
    prettyplease::unparse(&syn::parse2(tokens).expect("the expansion is a valid item"))
}

/// The Rust block that follows the README's `<!-- expansion -->` marker.
fn readme_block() -> &'static str {
    let readme = include_str!("../../README.md");
    let start = readme
        .find("<!-- expansion -->")
        .expect("README has the expansion marker");
    let body = &readme[start..];
    let open = body
        .find("```rust\n")
        .expect("a rust block after the marker")
        + 8;
    let len = body[open..].find("```").expect("the block ends");
    &body[open..open + len]
}

#[test]
fn the_readme_shows_the_real_expansion() {
    assert_eq!(
        readme_block(),
        example(),
        "the README's expansion is stale: paste the output of \
         `cargo test -p fusebox-macros print_expansion -- --nocapture`"
    );
}

#[test]
fn print_expansion() {
    print!("{}", example());
}

#[test]
fn an_argument_error_keeps_the_function() {
    let out = entry(
        Kind::Breaker,
        quote!(timeout = "soon"),
        quote!(
            async fn lookup() -> Result<u32, E> {
                Ok(1)
            }
        ),
    )
    .to_string();
    assert!(out.contains("compile_error"), "{out}");
    assert!(out.contains("async fn lookup"), "{out}");
    // Not wrapped: a broken configuration must not add errors of its own.
    assert!(!out.contains("__private"), "{out}");
}
