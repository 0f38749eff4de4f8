//! macros/docs/expansion.md shows the expansion of DESIGN.md's example; this keeps it true, token for token.

use quote::quote;

use crate::{entry, Kind};

/// The example of macros/docs/expansion.md, formatted by prettyplease.
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

/// The Rust block that follows the `<!-- expansion -->` marker of macros/docs/expansion.md.
fn readme_block() -> &'static str {
    let readme = include_str!("../docs/expansion.md");
    let start = readme
        .find("<!-- expansion -->")
        .expect("expansion.md has the expansion marker");
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
        "macros/docs/expansion.md is stale: paste the output of \
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

/// What `#[async_trait]` hands the attribute for `async fn load(&self, id: u32) -> Result<u32, E>`.
fn async_trait_method() -> proc_macro2::TokenStream {
    quote! {
        fn load<'life0, 'async_trait>(
            &'life0 self,
            id: u32,
        ) -> ::core::pin::Pin<Box<
            dyn ::core::future::Future<Output = Result<u32, E>> + ::core::marker::Send + 'async_trait
        >>
        where
            'life0: 'async_trait,
            Self: 'async_trait,
        {
            Box::pin(async move {
                if let ::core::option::Option::Some(__ret) = ::core::option::Option::None::<Result<u32, E>> {
                    #[allow(unreachable_code)]
                    return __ret;
                }
                let __self = self;
                let id = id;
                let __ret: Result<u32, E> = { Ok(id) };
                #[allow(unreachable_code)]
                __ret
            })
        }
    }
}

#[test]
fn an_async_trait_method_is_wrapped_inside_its_box_pin() {
    let out = entry(
        Kind::Breaker,
        quote!(key = self.shard),
        async_trait_method(),
    );
    let file: syn::File = syn::parse2(out).expect("the expansion is a valid item");
    let syn::Item::Fn(f) = &file.items[0] else {
        panic!("a fn")
    };
    // The signature is async-trait's, untouched; the one statement is still `Box::pin(..)`,
    // and the breaker is inside it, around async-trait's own block.
    assert!(f.sig.asyncness.is_none());
    assert_eq!(f.block.stmts.len(), 1);
    let text = quote!(#f).to_string();
    let pin = text.find("Box :: pin").expect("Box::pin kept");
    let breaker = text.find("keyed_breaker").expect("a keyed breaker");
    let body = text
        .find("let __self = self")
        .expect("async-trait's body kept");
    assert!(pin < breaker && breaker < body, "{text}");
    assert!(!text.contains("compile_error"), "{text}");
}

#[test]
fn a_fn_that_is_not_a_future_gets_one_error() {
    let out = entry(
        Kind::Bulkhead,
        quote!(pool = 2),
        quote!(
            fn lookup() -> u32 {
                1
            }
        ),
    )
    .to_string();
    assert_eq!(out.matches("compile_error").count(), 1, "{out}");
    assert!(out.contains("fn lookup"), "{out}");
}
