//! The checked settings as the constant the generated code holds.
//!
//! `fusebox-settings` accepted them at compile time; the generated code rebuilds exactly those
//! values with `Settings::__validated(SettingsParts { .. })` (a `const`), a struct literal whose
//! fields are named, so the runtime has nothing left to refuse and no fall-back path exists.

use fusebox_settings::{
    BulkheadParts, BulkheadSettings, HalfOpenPolicy, PoolLimit, Settings, SettingsParts, SlowRule,
    WindowKind,
};
use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::tokens::duration;

/// `Settings::__validated(SettingsParts { .. })` with every field of `s`.
pub fn breaker_settings(s: &Settings, pv: &TokenStream) -> TokenStream {
    // Destructured, not read field by field: a field added to the parts fails to compile here.
    let SettingsParts {
        failure_rate,
        window,
        min_calls,
        slow,
        timeout,
        half_open_timeout,
        half_open_slow,
        open_for,
        backoff,
        open_for_max,
        half_open,
        alert_after,
        max_keys,
        probe_every,
        ramp,
    } = s.__parts();
    let failure_rate = pct(failure_rate);
    let window = window_kind(window, pv);
    let min_calls = count(min_calls);
    let slow = option(slow.map(|rule| slow_rule(rule, pv)));
    let timeout = option(timeout.map(duration));
    let half_open_timeout = option(half_open_timeout.map(duration));
    let half_open_slow = option(half_open_slow.map(duration));
    let open_for = duration(open_for);
    let backoff = Literal::f64_unsuffixed(backoff);
    let open_for_max = duration(open_for_max);
    let half_open = half_open_policy(half_open, pv);
    let alert_after = duration(alert_after);
    let max_keys = count(max_keys);
    let probe_every = option(probe_every.map(duration));
    let ramp = option(ramp.map(duration));
    // What `check` derived from `timeout` rides on a call of its own, only when there is some,
    // so settings that derive nothing expand exactly as before.
    let derived = match s.__derived_bits() {
        0 => quote!(),
        bits => {
            let bits = Literal::u8_unsuffixed(bits);
            quote!(.__with_derived(#bits))
        }
    };
    // The keys the attribute wrote, for overrides to be laid over (`fusebox_settings`'s
    // `written.rs`), likewise only when there are some.
    let written = match s.__written_bits() {
        0 => quote!(),
        bits => {
            let bits = Literal::u32_unsuffixed(bits);
            quote!(.__with_written(#bits))
        }
    };
    quote! {
        #pv::Settings::__validated(#pv::SettingsParts {
            failure_rate: #failure_rate,
            window: #window,
            min_calls: #min_calls,
            slow: #slow,
            timeout: #timeout,
            half_open_timeout: #half_open_timeout,
            half_open_slow: #half_open_slow,
            open_for: #open_for,
            backoff: #backoff,
            open_for_max: #open_for_max,
            half_open: #half_open,
            alert_after: #alert_after,
            max_keys: #max_keys,
            probe_every: #probe_every,
            ramp: #ramp,
        })
        #derived
        #written
    }
}

/// `BulkheadSettings::__validated(BulkheadParts { .. })` with every field of `s`.
pub fn bulkhead_settings(s: &BulkheadSettings, pv: &TokenStream) -> TokenStream {
    let BulkheadParts {
        pool,
        max_wait,
        limit,
    } = s.__parts();
    let pool = Literal::usize_unsuffixed(pool);
    let max_wait = duration(max_wait);
    let limit = match limit {
        PoolLimit::Adaptive { min_pool, max_pool } => {
            let (min, max) = (
                Literal::usize_unsuffixed(min_pool),
                Literal::usize_unsuffixed(max_pool),
            );
            quote!(#pv::PoolLimit::Adaptive { min_pool: #min, max_pool: #max })
        }
        _ => quote!(#pv::PoolLimit::Fixed),
    };
    quote! {
        #pv::BulkheadSettings::__validated(#pv::BulkheadParts {
            pool: #pool,
            max_wait: #max_wait,
            limit: #limit,
        })
    }
}

fn pct(p: u8) -> Literal {
    Literal::u8_unsuffixed(p)
}

fn count(n: u32) -> Literal {
    Literal::u32_unsuffixed(n)
}

fn option(value: Option<TokenStream>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

fn window_kind(window: WindowKind, pv: &TokenStream) -> TokenStream {
    match window {
        WindowKind::Time(d) => {
            let d = duration(d);
            quote!(#pv::WindowKind::Time(#d))
        }
        WindowKind::Calls(n) => {
            let n = count(n);
            quote!(#pv::WindowKind::Calls(#n))
        }
    }
}

fn slow_rule(rule: SlowRule, pv: &TokenStream) -> TokenStream {
    let (bound, rate, strict) = (duration(rule.bound), pct(rule.rate), rule.strict);
    quote!(#pv::SlowRule { bound: #bound, rate: #rate, strict: #strict })
}

fn half_open_policy(policy: HalfOpenPolicy, pv: &TokenStream) -> TokenStream {
    match policy {
        HalfOpenPolicy::Share { pct: p, window } => {
            let (p, w) = (pct(p), duration(window));
            quote!(#pv::HalfOpenPolicy::Share { pct: #p, window: #w })
        }
        HalfOpenPolicy::Calls(n) => {
            let n = count(n);
            quote!(#pv::HalfOpenPolicy::Calls(#n))
        }
    }
}
