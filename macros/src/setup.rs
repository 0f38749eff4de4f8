//! The static handles of a call site: the statements that make (once) the breaker and the
//! bulkhead an expansion runs, each with its settings checked at compile time (`emit`).

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;

use crate::breaker_args::BreakerArgs;
use crate::bulkhead_args::BulkheadArgs;

/// Setup statements, and the expression (`&Breaker`, `&Bulkhead`) of the handle they bind.
pub struct Handle {
    pub setup: TokenStream,
    pub handle: TokenStream,
    /// A keyed breaker's `&KeyedBreaker`, which `run_keyed` takes: the key's breaker is found
    /// when the call is first polled, and `handle` (`.breaker()`) looks it up for the stale
    /// cache and retries.
    pub keyed: Option<TokenStream>,
}

/// A static breaker, listed in the registry from the start, or one per key from a static
/// template.
pub fn breaker(
    b: &BreakerArgs,
    default_name: &TokenStream,
    var: &Ident,
    pv: &TokenStream,
) -> Handle {
    let name = match &b.name {
        Some((n, _)) => quote!(#n),
        None => default_name.clone(),
    };
    // A default name is listed apart, so two functions that share one by accident are told.
    let default_named = match (&b.name, &b.key) {
        (None, None) => quote! {
            #pv::site!(DEFAULT_NAMED_SITES,
                static DEFAULT_NAMED: &str = NAME;
            );
        },
        _ => TokenStream::new(),
    };
    let settings = crate::emit::breaker_settings(&b.settings, pv);
    let config = quote!(#pv::BreakerConfig::from_settings(NAME, SETTINGS));
    let Some(key) = &b.key else {
        let setup = quote! {
            let #var = {
                const NAME: &str = #name;
                const SETTINGS: #pv::Settings = #settings;
                fn config() -> #pv::BreakerConfig {
                    #config
                }
                // Listed in the registry from the start, before the first call.
                #pv::site!(BREAKER_SITES,
                    static SITE: #pv::BreakerSite = #pv::BreakerSite { name: NAME, config };
                );
                #default_named
                static CELL: #pv::OnceCell<#pv::Breaker> =
                    #pv::OnceCell::new();
                #pv::static_breaker(&CELL, config)
            };
        };
        return Handle {
            setup,
            handle: quote!(&*#var),
            keyed: None,
        };
    };
    // With `stale_for`, the call's breaker is the stale cache's after the call: kept when the
    // call starts, not looked up again after it (when its key may have been evicted).
    let keep_now = b.stale_for.is_some();
    keyed(key, &name, &settings, &config, keep_now, var, pv)
}

/// A breaker per key, from a static template: the key is evaluated before our block, so the
/// user's expression cannot see the items in it.
fn keyed(
    key: &syn::Expr,
    name: &TokenStream,
    settings: &TokenStream,
    config: &TokenStream,
    keep_now: bool,
    var: &Ident,
    pv: &TokenStream,
) -> Handle {
    let key_span = syn::spanned::Spanned::span(key);
    let key_var = format_ident!("__fusebox_key", span = Span::mixed_site());
    // Used at the key's location (through `identity`, which rustc reports at its argument),
    // so a key that is not `Display` is reported at the key.
    let key_use = Ident::new("__fusebox_key", Span::mixed_site().located_at(key_span));
    let key_use = quote_spanned!(key_span=> ::core::convert::identity(#key_use));
    let key_ref = quote_spanned!(key_span=> &(#key));
    let form = format_ident!("__fusebox_key_form", span = Span::mixed_site());
    // Integers and text are handed over as they are (no `core::fmt` per call): which one the
    // key is, method resolution answers at compile time (`KeyProbe`'s two traits).
    let setup = quote! {
        let #key_var = #key_ref;
        let #var = {
            const NAME: &str = #name;
            const SETTINGS: #pv::Settings = #settings;
            fn config() -> #pv::BreakerConfig {
                #config
            }
            // Known from the start, so overrides at start are checked against its keys'
            // template and count as declared (`name/*`).
            #pv::site!(KEYED_BREAKER_SITES,
                static SITE: #pv::BreakerSite = #pv::BreakerSite { name: NAME, config };
            );
            static TEMPLATE: #pv::KeyedSite = #pv::KeyedSite::new(config);
            #[allow(unused_imports)]
            use #pv::{KeyFormDisplay as _, KeyFormFast as _};
            let #form = (&#pv::KeyProbe(#key_var)).key_form();
            #pv::keyed_breaker(&TEMPLATE, #key_use, #form, #keep_now)
        };
    };
    Handle {
        setup,
        handle: quote!(#var.breaker()),
        keyed: Some(quote!(&#var)),
    }
}

/// A static bulkhead, listed in the registry from the start.
pub fn bulkhead(
    b: &BulkheadArgs,
    default_name: &TokenStream,
    var: &Ident,
    pv: &TokenStream,
) -> Handle {
    let name = match &b.name {
        Some((n, _)) => quote!(#n),
        None => default_name.clone(),
    };
    let settings = crate::emit::bulkhead_settings(&b.settings, pv);
    let setup = quote! {
        let #var = {
            const NAME: &str = #name;
            const SETTINGS: #pv::BulkheadSettings = #settings;
            fn config() -> #pv::BulkheadConfig {
                #pv::BulkheadConfig::from_settings(NAME, SETTINGS)
            }
            // Listed in the registry from the start, before the first call.
            #pv::site!(BULKHEAD_SITES,
                static SITE: #pv::BulkheadSite = #pv::BulkheadSite { name: NAME, config };
            );
            static CELL: #pv::OnceCell<#pv::Bulkhead> =
                #pv::OnceCell::new();
            #pv::static_bulkhead(&CELL, config)
        };
    };
    Handle {
        setup,
        handle: quote!(&*#var),
        keyed: None,
    }
}
