//! Every annotated breaker and bulkhead, known before its first call: each call site of
//! `#[breaker]` / `#[bulkhead]` adds a [`BreakerSite`] / [`BulkheadSite`] descriptor to a
//! link-time list (`linkme`'s distributed slices), and a registry materialises them all when
//! it is made. So `registry().breakers()`, metrics, Prometheus and the admin router list them
//! with zero counts, and an operator can force one open before any traffic.
//!
//! linkme rather than inventory: the list is built by the linker, with no code running before
//! `main` (inventory registers through life-before-main constructors) and nothing to walk at
//! run time but a slice. Keyed sites are listed apart (`KEYED_BREAKER_SITES`): their keys are
//! unknown until called, so no breaker is made for them, but overrides at start know their
//! templates.

use linkme::distributed_slice;

use crate::bulkhead::BulkheadConfig;
use crate::settings::BreakerConfig;

/// One `#[breaker]` call site: its name and its validated settings.
#[derive(Debug)]
pub struct BreakerSite {
    /// The registry name.
    pub name: &'static str,
    /// The site's settings, as its first call would register them.
    pub config: fn() -> BreakerConfig,
}

/// One `#[bulkhead]` call site.
#[derive(Debug)]
pub struct BulkheadSite {
    /// The registry name.
    pub name: &'static str,
    /// The site's settings.
    pub config: fn() -> BulkheadConfig,
}

/// Lists a call site's static in one of the slices below (generated code only, as
/// `__private::site!(BREAKER_SITES, static SITE: .. = ..;)`). linkme is named here, through
/// `$crate`, rather than in the expansion: its `#[linkme(crate = ..)]` helper would be one more
/// error ("cannot find attribute `linkme`") when the user's `crate = ".."` path does not
/// resolve, while a macro reached through that path is simply not expanded, leaving the
/// unresolved path as the one error.
#[doc(hidden)]
#[macro_export]
macro_rules! __fusebox_site {
    ($slice:ident, $($item:tt)*) => {
        #[$crate::__private::linkme::distributed_slice($crate::__private::$slice)]
        #[linkme(crate = $crate::__private::linkme)]
        $($item)*
    };
}

/// Every `#[breaker]` site with a static name in the program.
#[distributed_slice]
pub static BREAKER_SITES: [BreakerSite];

/// Every `#[breaker(key = ...)]` site in the program: the template its keys' breakers are
/// made from (named without a key). Never made into breakers itself; overrides applied at start
/// are checked against it and count as declared for its keys (`payments/*`).
#[distributed_slice]
pub static KEYED_BREAKER_SITES: [BreakerSite];

/// Every `#[bulkhead]` site in the program.
#[distributed_slice]
pub static BULKHEAD_SITES: [BulkheadSite];

/// The name of every static `#[breaker]` site that did not give `name`: the default,
/// `module::path::fn_name`, leaves out a method's type, so two types' methods of one name in
/// one module would share a breaker without anyone choosing it. Two entries of one name here
/// are that accident (one generic function is one entry: its statics are shared).
#[distributed_slice]
pub static DEFAULT_NAMED_SITES: [&'static str];

impl super::Registry {
    /// Registers every listed site in this very registry (not a test scope's: this runs while
    /// a registry is made, before anyone can ask it to defer).
    pub(super) fn preload(&self) {
        let mut breakers = super::write(&self.breakers);
        for site in BREAKER_SITES {
            let config = (site.config)();
            debug_assert_eq!(config.name(), site.name);
            // Two sites of one name: the first is kept, and the second's first call counts
            // the conflict as `register` always has.
            breakers.entry(config.name.clone()).or_insert_with(|| {
                crate::breaker::Breaker::with_events(config, self.events.clone())
            });
        }
        shared_default_names(&*breakers);
        drop(breakers);
        let mut bulkheads = super::write(&self.bulkheads);
        for site in BULKHEAD_SITES {
            let config = (site.config)();
            debug_assert_eq!(config.name(), site.name);
            bulkheads
                .entry(config.name.clone())
                .or_insert_with(|| crate::bulkhead::Bulkhead::new(config));
        }
    }
}

/// Logs at ERROR, and counts as a conflict, every default name that two annotated functions
/// share: DESIGN's "a shared breaker for unrelated dependencies is a bug users hit".
fn shared_default_names<S: std::hash::BuildHasher>(
    breakers: &std::collections::HashMap<std::sync::Arc<str>, crate::breaker::Breaker, S>,
) {
    let mut seen: Vec<&'static str> = Vec::new();
    let mut reported: Vec<&'static str> = Vec::new();
    for &name in DEFAULT_NAMED_SITES {
        if !seen.contains(&name) {
            seen.push(name);
            continue;
        }
        if reported.contains(&name) {
            continue;
        }
        reported.push(name);
        if let Some(b) = breakers.get(name) {
            b.0.counters
                .conflicts
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        tracing::error!(
            breaker = name,
            "two annotated functions share the default breaker name `{name}` (the default leaves \
             out a method's type): they share one breaker; give each its own `name = \"...\"`"
        );
    }
}
