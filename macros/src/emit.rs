//! The checked settings as the constant the generated code holds.
//!
//! `fusebox-settings` accepted them at compile time; the generated code rebuilds exactly those
//! values with `Settings::__validated` (a `const`), so the runtime has nothing left to refuse
//! and no fall-back path exists.

use std::time::Duration;

use fusebox_settings::{HalfOpenPolicy, PoolLimit, Settings, WindowKind};
use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::tokens::duration;

/// `Settings::__validated(...)` with every field of `s`, in the order of its parameters.
pub fn breaker_settings(s: &Settings, pv: &TokenStream) -> TokenStream {
    let pct = Literal::u8_unsuffixed;
    let count = Literal::u32_unsuffixed;
    let opt = |d: Option<Duration>| match d {
        Some(d) => {
            let d = duration(d);
            quote!(::core::option::Option::Some(#d))
        }
        None => quote!(::core::option::Option::None),
    };
    let failure_rate = pct(s.failure_rate());
    let window = match s.window() {
        WindowKind::Time(d) => {
            let d = duration(d);
            quote!(#pv::WindowKind::Time(#d))
        }
        WindowKind::Calls(n) => {
            let n = count(n);
            quote!(#pv::WindowKind::Calls(#n))
        }
    };
    let min_calls = count(s.min_calls());
    let slow = match s.slow() {
        Some(rule) => {
            let (bound, rate, strict) = (duration(rule.bound), pct(rule.rate), rule.strict);
            quote!(::core::option::Option::Some(#pv::SlowRule { bound: #bound, rate: #rate, strict: #strict }))
        }
        None => quote!(::core::option::Option::None),
    };
    let timeout = opt(s.timeout());
    let half_open_timeout = opt(s.half_open_timeout_given());
    let open_for = duration(s.open_for());
    let backoff = Literal::f64_unsuffixed(s.backoff());
    let open_for_max = duration(s.open_for_max());
    let half_open = match s.half_open() {
        HalfOpenPolicy::Share { pct: p, window } => {
            let (p, w) = (pct(p), duration(window));
            quote!(#pv::HalfOpenPolicy::Share { pct: #p, window: #w })
        }
        HalfOpenPolicy::Calls(n) => {
            let n = count(n);
            quote!(#pv::HalfOpenPolicy::Calls(#n))
        }
    };
    let alert_after = duration(s.alert_after());
    let max_keys = count(s.max_keys());
    let ns = |d: Option<Duration>| Literal::u64_unsuffixed(d.map_or(0, fusebox_settings::nanos));
    let half_open_slow_ns = ns(s.half_open_slow_given());
    let probe_every_ns = ns(s.probe_every());
    let ramp_ns = ns(s.ramp());
    // What `check` derived from `timeout` rides on a call of its own, only when there is some,
    // so settings that derive nothing expand exactly as before issue 26.
    let derived = match s.__derived_bits() {
        0 => quote!(),
        bits => {
            let bits = Literal::u8_unsuffixed(bits);
            quote!(.__with_derived(#bits))
        }
    };
    quote! {
        #pv::Settings::__validated(
            #failure_rate,
            #window,
            #min_calls,
            #slow,
            #timeout,
            #half_open_timeout,
            #half_open_slow_ns,
            #open_for,
            #backoff,
            #open_for_max,
            #half_open,
            #alert_after,
            #max_keys,
            #probe_every_ns,
            #ramp_ns,
        )
        #derived
    }
}

/// `BulkheadSettings::__validated(pool, max_wait)` with the checked `pool` and `max_wait`,
/// then `.__adaptive(min_pool, max_pool)` for an adaptive limit.
pub fn bulkhead_settings(
    pool: usize,
    max_wait: Duration,
    limit: PoolLimit,
    pv: &TokenStream,
) -> TokenStream {
    let pool = Literal::usize_unsuffixed(pool);
    let max_wait = duration(max_wait);
    let fixed = quote!(#pv::BulkheadSettings::__validated(#pool, #max_wait));
    match limit {
        PoolLimit::Adaptive { min_pool, max_pool } => {
            let (min, max) = (
                Literal::usize_unsuffixed(min_pool),
                Literal::usize_unsuffixed(max_pool),
            );
            quote!(#fixed.__adaptive(#min, #max))
        }
        _ => fixed,
    }
}
