//! The start's overrides (issue 29) in a registry: applied to every breaker and bulkhead of a
//! matching name that exists, kept for keyed breakers (and any name) made later.

use std::sync::atomic::Ordering::{Acquire, Release};

use fusebox_settings::{ConfigError, Source};

use super::{read, write, Registry};
use crate::breaker::Breaker;
use crate::bulkhead::Bulkhead;
use crate::settings::overrides::{ranked, without_crate, Entry};
use crate::settings::{
    Applied, AppliedTo, BreakerConfig, GuardKind, OverrideError, Overrides, Undeclared,
};

/// The pairs every entry matching `name` gives, the least specific first so that the most
/// specific one's value of a key wins (then the one given last), with each key's source.
fn resolve<'a>(rules: &'a [Entry], target: GuardKind, name: &str) -> Resolved<'a> {
    let matching = ranked(rules, target, name);
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut sources: Vec<(String, Source)> = Vec::new();
    for e in &matching {
        for (k, v) in &e.pairs {
            pairs.retain(|(pk, _)| pk != k);
            pairs.push((k.clone(), v.clone()));
            sources.push((k.clone(), e.source));
        }
    }
    // A value derived from given keys is the most specific (then last) entry's.
    let source = matching.last().map_or(Source::Code, |e| e.source);
    (pairs, sources, matching, source)
}

/// The pairs for one name, each key's source, the entries that matched, the fallback source.
type Resolved<'a> = (
    Vec<(String, String)>,
    Vec<(String, Source)>,
    Vec<&'a Entry>,
    Source,
);

/// The error for `name`'s settings: blamed on the matching entry that gave a key the reason
/// names (the last one), else on the most specific; named by the breaker or bulkhead.
fn blame(target: GuardKind, matching: &[&Entry], name: &str, reason: ConfigError) -> OverrideError {
    let named = reason.keys();
    let entry = matching
        .iter()
        .rev()
        .find(|e| e.pairs.iter().any(|(k, _)| named.contains(&k.as_str())))
        .or(matching.last())
        .copied();
    let mut e = match entry {
        Some(entry) => entry.error(String::new(), String::new(), reason),
        None => OverrideError {
            target,
            name: String::new(),
            given_as: None,
            key: String::new(),
            value: String::new(),
            source: Source::Code,
            reason,
        },
    };
    if e.name != name {
        e.given_as = Some(std::mem::replace(&mut e.name, name.to_owned()));
    }
    e
}

impl Registry {
    /// Applies overrides given at start (issue 29) to every breaker and bulkhead whose name
    /// they match, made yet or not: each is checked by the settings table over the code's
    /// settings first, all of them before any is applied, so a bad one changes nothing and is
    /// the error, naming the breaker or bulkhead, the key, the value and the reason. The
    /// overrides are kept: a keyed breaker's key made later (`payments/*`), or any breaker or
    /// bulkhead registered later, gets them when made (a bad one then is logged at ERROR and
    /// the code's settings kept). Names and patterns that match nothing declared are in
    /// [`Applied::undeclared`] and logged at WARN. Applied again, later overrides win over
    /// earlier ones for the keys both give. Inside a test scope (feature `testing`), the
    /// scope's registry is the one changed.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::{registry, Breaker};
    /// use fusebox::settings::{Overrides, Source};
    /// let b = Breaker::builder("apply-doc").timeout(Duration::from_millis(800)).build().unwrap();
    /// let o = Overrides::from_vars([("FUSEBOX_BREAKER", "apply-doc; timeout=2s")]).unwrap();
    /// let applied = registry().apply_overrides(&o).unwrap();
    /// assert_eq!(applied.applied[0].name, "apply-doc");
    /// assert_eq!(b.config_in_force().timeout(), Some(Duration::from_secs(2)));
    /// let t = b.settings_in_force().into_iter().find(|s| s.key == "timeout").unwrap();
    /// assert_eq!((t.value.as_str(), t.source), ("2s", Source::Env));
    /// ```
    // A start-time error that names the breaker, key and value in full: its size is no cost.
    #[allow(clippy::result_large_err)]
    pub fn apply_overrides(&self, overrides: &Overrides) -> Result<Applied, OverrideError> {
        let here = self.current();
        overrides.check_text()?;
        let _w = super::lock(&here.overrides_writer);
        let mut rules = read(&here.overrides).clone();
        rules.extend(overrides.entries.iter().cloned());
        let touched = |target: GuardKind, name: &str| {
            overrides
                .entries
                .iter()
                .any(|e| e.target == target && e.matches(name))
        };
        let breakers: Vec<Breaker> = here
            .breakers()
            .into_iter()
            .filter(|b| touched(GuardKind::Breaker, b.name()))
            .collect();
        let bulkheads: Vec<Bulkhead> = here
            .bulkheads()
            .into_iter()
            .filter(|b| touched(GuardKind::Bulkhead, b.name()))
            .collect();
        // Every one checked before any is changed.
        let mut plan_b = Vec::new();
        for b in &breakers {
            let (pairs, sources, matching, source) = resolve(&rules, GuardKind::Breaker, b.name());
            b.check_overrides(&pairs)
                .map_err(|r| blame(GuardKind::Breaker, &matching, b.name(), r))?;
            plan_b.push((b, pairs, sources, source));
        }
        // The keyed sites' templates: an override of their keys is checked against the
        // template now, at start, rather than when a key is first called.
        let templates = keyed_templates(&here);
        for t in &templates {
            for name in key_names_touched(&overrides.entries, &t.name) {
                let (pairs, _, matching, _) = resolve(&rules, GuardKind::Breaker, &name);
                // The stand-in key is named as every key of the family.
                let shown = match name.strip_suffix(STAND_IN) {
                    Some(family) => format!("{family}*"),
                    None => name.clone(),
                };
                crate::breaker::live::refuse_code_only(&pairs, t.settings().max_keys())
                    .and_then(|()| {
                        t.settings()
                            .with_overrides(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                    })
                    .map_err(|r| blame(GuardKind::Breaker, &matching, &shown, r))?;
            }
        }
        let mut plan_h = Vec::new();
        for h in &bulkheads {
            let (pairs, sources, matching, source) = resolve(&rules, GuardKind::Bulkhead, h.name());
            h.check_overrides(&pairs)
                .map_err(|r| blame(GuardKind::Bulkhead, &matching, h.name(), r))?;
            plan_h.push((h, pairs, sources, source));
        }
        let mut applied = Applied::default();
        for (b, pairs, sources, source) in plan_b {
            b.override_at_start(pairs.clone(), sources, source)
                .map_err(|r| blame(GuardKind::Breaker, &[], b.name(), r))?;
            applied.applied.push(AppliedTo {
                target: GuardKind::Breaker,
                name: b.name().to_owned(),
                pairs,
            });
        }
        for (h, pairs, sources, source) in plan_h {
            h.override_at_start(pairs.clone(), sources, source)
                .map_err(|r| blame(GuardKind::Bulkhead, &[], h.name(), r))?;
            applied.applied.push(AppliedTo {
                target: GuardKind::Bulkhead,
                name: h.name().to_owned(),
                pairs,
            });
        }
        for e in &overrides.entries {
            let declared = match e.target {
                GuardKind::Breaker => {
                    breakers.iter().any(|b| e.matches(b.name()))
                        || templates.iter().any(|t| {
                            !key_names_touched(std::slice::from_ref(e), &t.name).is_empty()
                        })
                }
                GuardKind::Bulkhead => bulkheads.iter().any(|b| e.matches(b.name())),
            };
            if !declared {
                // A keyed site's own name: declared, but its breakers are `name/<key>`.
                let keyed =
                    e.target == GuardKind::Breaker && templates.iter().any(|t| e.matches(&t.name));
                if keyed {
                    tracing::warn!(
                        kind = %e.target,
                        name = %e.name,
                        source = %e.source,
                        "override for a keyed breaker's name, which is no breaker: its breakers are `name/<key>`; write `name/*` for every key, or `name/<key>` for one"
                    );
                } else {
                    tracing::warn!(
                        kind = %e.target,
                        name = %e.name,
                        source = %e.source,
                        "override for a name no code declares (yet): kept for one made later"
                    );
                }
                applied.undeclared.push(Undeclared {
                    target: e.target,
                    name: e.name.clone(),
                    source: e.source,
                });
            }
        }
        *write(&here.overrides) = rules;
        here.has_overrides.store(true, Release);
        Ok(applied)
    }

    /// Gives a breaker made after overrides were applied the ones that match its name.
    pub(super) fn override_new_breaker(&self, b: &Breaker) {
        if !self.has_overrides.load(Acquire) {
            return;
        }
        let rules = read(&self.overrides);
        let (pairs, sources, matching, source) = resolve(&rules, GuardKind::Breaker, b.name());
        if pairs.is_empty() || b.0.live.get().is_some() {
            return;
        }
        if let Err(r) = b.override_at_start(pairs, sources, source) {
            let e = blame(GuardKind::Breaker, &matching, b.name(), r);
            tracing::error!(error = %e, "override refused for a new breaker; the code's settings are kept");
        }
    }

    /// Gives a bulkhead made after overrides were applied the ones that match its name.
    pub(super) fn override_new_bulkhead(&self, b: &Bulkhead) {
        if !self.has_overrides.load(Acquire) {
            return;
        }
        let rules = read(&self.overrides);
        let (pairs, sources, matching, source) = resolve(&rules, GuardKind::Bulkhead, b.name());
        if pairs.is_empty() {
            return;
        }
        if let Err(r) = b.override_at_start(pairs, sources, source) {
            let e = blame(GuardKind::Bulkhead, &matching, b.name(), r);
            tracing::error!(error = %e, "override refused for a new bulkhead; the code's settings are kept");
        }
    }
}

/// A key no real key equals (`key_name.rs` percent-encodes control characters, so no key in a
/// name holds a NUL): what a pattern over every key of a family is checked as.
const STAND_IN: &str = "\u{0}";

/// The template of every `#[breaker(key = ...)]` site, once per name (the first site's).
fn keyed_templates(here: &Registry) -> Vec<BreakerConfig> {
    let mut seen: Vec<BreakerConfig> = Vec::new();
    for site in super::sites::KEYED_BREAKER_SITES {
        if !seen.iter().any(|c| &*c.name == site.name) {
            seen.push((site.config)());
        }
    }
    // Keyed names declared at run time (a keyed tower layer, built before its first key).
    for family in here.families.load().values() {
        if !seen.iter().any(|c| c.name == family.base) {
            seen.push(family.template().clone());
        }
    }
    seen
}

/// The names of the keys of `family` that `entries` give settings to: each exact key named
/// (`payments/eu`), and one stand-in for every key a pattern covers (`payments/*`, `*`), whose
/// key no real key can equal.
fn key_names_touched(entries: &[Entry], family: &str) -> Vec<String> {
    let prefix = format!("{family}/");
    let stand_in = format!("{prefix}{STAND_IN}");
    let mut names = Vec::new();
    for e in entries.iter().filter(|e| e.target == GuardKind::Breaker) {
        if !e.name.contains('*') {
            // A key's exact name, written with the family's path or without its crate's name.
            let key = e.name.strip_prefix(&prefix).or_else(|| {
                let short = without_crate(&e.name, family)?;
                e.name.strip_prefix(&format!("{short}/"))
            });
            if let Some(key) = key {
                let name = format!("{prefix}{key}");
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        } else if e.matches(&stand_in) && !names.contains(&stand_in) {
            names.push(stand_in.clone());
        }
    }
    names
}
