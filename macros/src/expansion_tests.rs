//! `macros/docs/expansion.md` shows the expansion of DESIGN.md's example; this keeps it true, token
//! for token. The other tests hold the phases to their promises: one error per mistake, the
//! function kept, and a body that does not parse still expanded.

use quote::quote;

use crate::attr::Kind;
use crate::entry;

/// The example of `macros/docs/expansion.md`, formatted by prettyplease.
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

/// The Rust block that follows the `<!-- expansion -->` marker of `macros/docs/expansion.md`.
fn documented_block() -> &'static str {
    let doc = include_str!("../docs/expansion.md");
    let start = doc
        .find("<!-- expansion -->")
        .expect("expansion.md has the expansion marker");
    let body = &doc[start..];
    let open = body
        .find("```rust\n")
        .expect("a rust block after the marker")
        + 8;
    let len = body[open..].find("```").expect("the block ends");
    &body[open..open + len]
}

#[test]
fn the_documented_expansion_is_the_real_one() {
    assert_eq!(
        documented_block(),
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

#[test]
fn a_body_that_does_not_parse_still_expands_with_no_error_of_ours() {
    // Half-typed: `let y = x +;`. rustc reports that syntax error in the body; the macro
    // adds none and still wraps the function, so rust-analyzer has an expansion.
    let out = entry(
        Kind::Breaker,
        quote!(timeout = "1s"),
        quote!(
            async fn lookup(x: u32) -> Result<u32, E> {
                let y = x +;
                Ok(y)
            }
        ),
    )
    .to_string();
    assert!(!out.contains("compile_error"), "{out}");
    assert!(out.contains("static_breaker"), "{out}");
    assert!(out.contains("let y = x + ;"), "{out}");
}

#[test]
fn inner_attributes_stay_first_in_the_body() {
    let out = entry(
        Kind::Bulkhead,
        quote!(pool = 2),
        quote!(
            async fn lookup() -> Result<u32, E> {
                #![allow(unused_variables)]
                let unused = 1;
                Ok(2)
            }
        ),
    );
    let f: syn::ItemFn = syn::parse2(out).expect("the expansion is a valid fn");
    assert_eq!(f.attrs.len(), 1, "the inner attribute is kept, once");
    assert!(matches!(f.attrs[0].style, syn::AttrStyle::Inner(_)));
}

/// Whether the attribute takes `ty` for a `Result`: with a breaker and no fallback, a value
/// type is refused with the error that asks for a `Result`.
fn taken_for_result(ty: proc_macro2::TokenStream) -> bool {
    let out = entry(
        Kind::Breaker,
        quote!(),
        quote!(
            async fn lookup() -> #ty {
                todo!()
            }
        ),
    )
    .to_string();
    !out.contains("needs a `Result` return type")
}

#[test]
fn a_result_is_recognised_by_its_path_not_by_a_suffix() {
    for ty in [
        quote!(Result<u32, E>),
        quote!(std::result::Result<u32, E>),
        quote!(::core::result::Result<u32, E>),
        quote!(io::Result<u32>),
        quote!(anyhow::Result<u32>),
        quote!((Result<u32, E>)),
    ] {
        assert!(taken_for_result(ty.clone()), "{ty}");
    }
    for ty in [
        quote!(SearchResult),
        quote!(search::SearchResult<u32>),
        quote!(ResultSet),
        quote!(u32),
    ] {
        assert!(!taken_for_result(ty.clone()), "{ty}");
    }
}
