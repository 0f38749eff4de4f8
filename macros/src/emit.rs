//! The checked settings as the builder calls the generated code makes.
//!
//! Only the keys the user wrote are emitted, each from the value `fusebox-settings` accepted,
//! so the runtime's builder (which runs the same checks) cannot refuse them.

use fusebox_settings::{HalfOpenPolicy, WindowKind};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote, ToTokens};

use crate::breaker_args::BreakerArgs;
use crate::tokens::duration;

/// `.setter(value)` for every setting the user gave, in the order of the builder's setters.
pub fn breaker_settings(b: &BreakerArgs) -> TokenStream {
    let s = &b.settings;
    let wrote = |k: &str| b.wrote(k);
    let pct = |v: u8| Literal::u8_unsuffixed(v).into_token_stream();
    let count = |n: u32| Literal::u32_unsuffixed(n).into_token_stream();
    let share = match s.half_open() {
        HalfOpenPolicy::Share { pct, window } => Some((pct, window)),
        HalfOpenPolicy::Calls(_) => None,
    };
    let mut calls: Vec<(String, Option<TokenStream>)> = vec![
        (
            "failure_rate".into(),
            wrote("failure_rate").then(|| pct(s.failure_rate())),
        ),
        (
            "window".into(),
            match s.window() {
                WindowKind::Time(d) if wrote("window") => Some(duration(d)),
                _ => None,
            },
        ),
        (
            "window_calls".into(),
            match s.window() {
                WindowKind::Calls(n) if wrote("window_calls") => Some(count(n)),
                _ => None,
            },
        ),
        (
            "min_calls".into(),
            wrote("min_calls").then(|| count(s.min_calls())),
        ),
    ];
    if let Some(rule) = s.slow() {
        let bound = duration(rule.bound);
        calls.push(if rule.strict {
            (format!("trip_p{}", 100 - rule.rate), Some(bound))
        } else {
            let rate = pct(rule.rate);
            ("slow".into(), Some(quote!(#bound, #rate)))
        });
    }
    let backoff = wrote("backoff").then(|| {
        let (f, max) = (
            Literal::f64_unsuffixed(s.backoff()),
            duration(s.open_for_max()),
        );
        quote!(#f, #max)
    });
    calls.extend([
        ("timeout".into(), s.timeout().map(duration)),
        (
            "half_open_timeout".into(),
            s.half_open_timeout_given().map(duration),
        ),
        (
            "open_for".into(),
            wrote("open_for").then(|| duration(s.open_for())),
        ),
        ("backoff".into(), backoff),
        (
            "half_open_pct".into(),
            share
                .filter(|_| wrote("half_open_pct"))
                .map(|(p, _)| pct(p)),
        ),
        (
            "half_open_window".into(),
            share
                .filter(|_| wrote("half_open_window"))
                .map(|(_, w)| duration(w)),
        ),
        (
            "half_open_calls".into(),
            match s.half_open() {
                HalfOpenPolicy::Calls(n) => Some(count(n)),
                HalfOpenPolicy::Share { .. } => None,
            },
        ),
        (
            "alert_after".into(),
            wrote("alert_after").then(|| duration(s.alert_after())),
        ),
    ]);
    calls
        .into_iter()
        .filter_map(|(setter, args)| {
            let setter = format_ident!("{}", setter);
            args.map(|args| quote!(.#setter(#args)))
        })
        .collect()
}
