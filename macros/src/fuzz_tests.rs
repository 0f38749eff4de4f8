//! Fuzzing the attribute parser on stable (issue 18 item 9): generated argument lists, real
//! keys and junk, through the same `entry` the attributes call. Never a panic; the output is
//! always valid Rust tokens (items), and it is either the expansion or a `compile_error!` that
//! keeps the function, with an error whenever a key is unknown.

use std::str::FromStr;

use proc_macro2::TokenStream;
use proptest::prelude::*;

use crate::attr::Kind;
use crate::{breaker_args, bulkhead_args, entry};

/// Values an argument may take: valid and invalid literals, paths, expressions, junk.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        "\"[0-9]{1,6}(ms|s|m|h|us|ns|x|)\"",
        "\"[a-z/ -]{0,12}\"",
        "[0-9]{1,22}",
        "-[0-9]{1,4}",
        "[0-9]{1,3}\\.[0-9]{1,3}",
        "[a-z_][a-z0-9_]{0,8}",
        "(self|item|user)\\.[a-z]{1,6}",
        "\\((self\\.[a-z]{1,4}, ?[a-z]{1,4})\\)",
        "::[a-z]{1,5}::[a-z]{1,5}",
        "\\|[a-z]\\| [a-z]\\.is_[a-z]{2,6}\\(\\)",
        "(true|false|'c'|b\"x\"|\\[1, 2\\]|\\{\\}|<T>|=|,)",
    ]
}

fn key(kind: Kind) -> impl Strategy<Value = String> {
    let known: Vec<&'static str> = match kind {
        Kind::Breaker => breaker_args::KEYS.to_vec(),
        Kind::Bulkhead => bulkhead_args::KEYS.to_vec(),
        Kind::Retry => crate::retry_args::KEYS.to_vec(),
    };
    prop_oneof![
        4 => prop::sample::select(known).prop_map(str::to_owned),
        1 => "[a-z_]{1,10}",
    ]
}

/// One argument: `key = value`, or a malformed variant of it.
fn arg(kind: Kind) -> impl Strategy<Value = (String, String)> {
    (key(kind), value(), 0u8..10).prop_map(|(k, v, shape)| {
        let text = match shape {
            0 => k.clone(),
            1 => format!("{k} {v}"),
            2 => format!("{k} == {v}"),
            3 => format!("{k}({v})"),
            _ => format!("{k} = {v}"),
        };
        (k, text)
    })
}

/// The functions an attribute may meet: good ones and ones it must refuse.
fn item() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "async fn get(id: u32) -> Result<u32, Error> { Ok(id) }",
        "async fn get(&self, item: u32) -> Result<u32, Error> { Ok(item) }",
        "async fn plain() -> u32 { 1 }",
        "fn not_async() -> Result<(), Error> { Ok(()) }",
        "async fn io(user: &User) -> std::io::Result<String> { todo!() }",
        "struct NotAFunction;",
        "async fn gen<T: Clone>(t: T) -> Result<T, E> { Ok(t) }",
    ])
}

fn check(kind: Kind, args: &[(String, String)], item: &str) -> Result<(), TestCaseError> {
    let text = args
        .iter()
        .map(|(_, a)| a.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let Ok(attr) = TokenStream::from_str(&text) else {
        return Ok(()); // not even tokens: the compiler refuses it before any macro runs
    };
    let item = TokenStream::from_str(item).unwrap();
    let out = entry(kind, attr, item);
    let file = syn::parse2::<syn::File>(out.clone());
    prop_assert!(file.is_ok(), "not valid items for {:?}: {}", text, out);
    let out = out.to_string();
    let failed = out.contains("compile_error");
    let known = match kind {
        Kind::Breaker => breaker_args::KEYS,
        Kind::Bulkhead => bulkhead_args::KEYS,
        Kind::Retry => crate::retry_args::KEYS,
    };
    if args.iter().any(|(k, _)| !known.contains(&k.as_str())) {
        prop_assert!(failed, "an unknown key must be an error: {:?}", text);
    }
    if failed {
        // An error keeps the function (one mistake, one error) and adds no wrapper.
        prop_assert!(!out.contains("__private"), "{:?}: {}", text, out);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn fuzz_breaker_arguments(args in prop::collection::vec(arg(Kind::Breaker), 0..6), item in item()) {
        check(Kind::Breaker, &args, item)?;
    }

    #[test]
    fn fuzz_bulkhead_arguments(args in prop::collection::vec(arg(Kind::Bulkhead), 0..4), item in item()) {
        check(Kind::Bulkhead, &args, item)?;
    }

    #[test]
    fn fuzz_retry_arguments(args in prop::collection::vec(arg(Kind::Retry), 0..5), item in item()) {
        check(Kind::Retry, &args, item)?;
    }
}
