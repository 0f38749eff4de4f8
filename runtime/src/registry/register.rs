//! Making and finding entries: a breaker per name, a keyed breaker per `name/key`, a bulkhead
//! per name, and the builders' `build`, which register what they validated.
//!
//! A name registered again with other settings keeps its first settings: the conflict is
//! logged at ERROR and counted in the entry's metrics (`conflicts`), never silently mixed.

use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use super::hot_keys::{self, Probe};
use super::key_form::KeyForm;
use super::key_name;
use super::keyed::{Family, Found, KeyedSite};
use super::scope::Current;
use super::{lock, read, registry, write, Families, Registry};
use crate::breaker::core::bump;
use crate::breaker::Breaker;
use crate::bulkhead::{Bulkhead, BulkheadBuilder, BulkheadConfig};
use crate::error::ConfigError;
use crate::settings::{BreakerBuilder, BreakerConfig};

thread_local! {
    /// The key as formatted, and its name form when it needed encoding.
    static KEY_BUF: RefCell<(String, String)> = const { RefCell::new((String::new(), String::new())) };
}

impl Registry {
    /// The breaker of `config.name()`, created with `config` if new.
    ///
    /// A name registered before with other settings keeps its first settings: the conflict is
    /// logged at ERROR and counted in its metrics (`conflicts`), never silently mixed.
    // `BreakerBuilder::build` is the documented way (it validates, then calls this); kept for
    // callers that hold a config, hidden so the documentation shows one way per purpose.
    #[doc(hidden)]
    pub fn register(&self, config: BreakerConfig) -> Breaker {
        let here = self.current();
        if let Some(key) = config.key() {
            let mut encoded = String::new();
            let config = if key_name::encode(key, &mut encoded) {
                config.with_key(&encoded)
            } else {
                config
            };
            let family = here.family_for(&config);
            let key = config.key().unwrap_or_default();
            let hash = family.hash(key);
            return match family.get(hash, key) {
                Found::Own(b) => checked(b, &config),
                Found::Missing => {
                    let b = family.insert(hash, config.clone(), &here.events);
                    here.override_new_breaker(&b);
                    checked(b, &config)
                }
            };
        }
        if let Some(b) = read(&here.breakers).get(config.name()).cloned() {
            return checked(b, &config);
        }
        let mut map = write(&here.breakers);
        if let Some(b) = map.get(config.name()) {
            return checked(b.clone(), &config);
        }
        let b = Breaker::with_events(config, here.events.clone());
        map.insert(b.0.code_config().name.clone(), b.clone());
        drop(map);
        // A plain name under a keyed one (`search/eu` beside `search` keyed): see `shared_name`.
        let name = b.name();
        let families = here.families.load();
        let mut under = name.match_indices('/').map(|(i, _)| &name[..i]);
        if let Some(base) = under.find(|base| families.contains_key(*base)) {
            shared_name(&b, base);
        }
        drop(families);
        here.override_new_breaker(&b);
        b
    }

    /// The breaker for `key` under `template`'s name: `name/key`, created on first use.
    ///
    /// ```
    /// use fusebox::{registry, Breaker};
    /// let template = Breaker::builder("shard-doc").config().unwrap();
    /// let shard = registry().keyed(&template, &3);
    /// assert_eq!(shard.name(), "shard-doc/3");
    /// assert!(registry().keyed(&template, &3).ptr_eq(&shard));
    /// ```
    pub fn keyed(&self, template: &BreakerConfig, key: &dyn fmt::Display) -> Breaker {
        let key = Key {
            form: KeyForm::Display,
            display: key,
        };
        self.keyed_with(template, None, key)
    }

    /// [`keyed`](Self::keyed) from a call site: its `static` template may vouch for its
    /// settings (the breaker is found without comparing them, `keyed/mod.rs`), and the site caches
    /// the keyed name it found (the process-wide registry's only), so the name is not looked
    /// up again per call. Each thread also keeps the keys it used last at the site
    /// (`hot_keys`), asked first, so a repeated key is not looked up again either.
    #[inline]
    pub(crate) fn keyed_site(&self, site: &'static KeyedSite, key: Key<'_>) -> Breaker {
        if let Some((site_at, generation, probe)) = self.hot_probe(site, key.form) {
            if let Some(b) = hot_keys::get(site_at, generation, probe) {
                return b;
            }
        }
        self.keyed_site_unprobed(site, key)
    }

    /// [`keyed_site`](Self::keyed_site) without asking this thread's recent keys: a key they
    /// were just asked for (`hot_keys::lend`), or had not.
    pub(crate) fn keyed_site_unprobed(&self, site: &'static KeyedSite, key: Key<'_>) -> Breaker {
        self.keyed_at(site, site.template(), key)
    }

    /// [`keyed_site_unprobed`](Self::keyed_site_unprobed) once the template is made: one copy
    /// for every call site (not one per site's closure). What it finds in the process-wide
    /// registry, it remembers in this thread's recent keys.
    fn keyed_at(
        &self,
        site: &'static KeyedSite,
        template: &'static BreakerConfig,
        key: Key<'_>,
    ) -> Breaker {
        let here = self.current();
        if !matches!(here, Current::Here(r) if r.global) {
            return here.keyed_with(template, Some(template), key);
        }
        let site_at = site as *const KeyedSite as usize;
        let Some(family) = site.family.get().filter(|f| !f.retired()) else {
            let family = here.family_for(template);
            // Kept once: a site whose family was evicted looks its name up on every call after.
            let _ = site.family.set(family.clone());
            let hot = Hot::new(site_at, &family);
            return here.keyed_in(&family, template, Some(template), key, Some(hot));
        };
        let hot = Hot::new(site_at, family);
        here.keyed_in(family, template, Some(template), key, Some(hot))
    }

    /// Where this thread may have `form`'s breaker at `site` in its recent keys (`hot_keys`):
    /// the site's address, its family's generation, and the key as the table compares it.
    /// `None` when only a lookup finds it: a test scope's registry, a site not yet used or
    /// whose family was evicted, a key only `Display`.
    #[inline(always)]
    pub(super) fn hot_probe<'k>(
        &self,
        site: &'static KeyedSite,
        form: KeyForm<'k>,
    ) -> Option<(usize, u64, Probe<'k>)> {
        // A key only `Display` is never there: asked nothing else.
        let probe = probe(form)?;
        if !matches!(self.current(), Current::Here(r) if r.global) {
            return None;
        }
        let family = site.family.get().filter(|f| !f.retired())?;
        let site_at = site as *const KeyedSite as usize;
        Some((site_at, family.generation(), probe))
    }

    #[inline]
    fn keyed_with(
        &self,
        template: &BreakerConfig,
        vouching: Option<&'static BreakerConfig>,
        key: Key<'_>,
    ) -> Breaker {
        let here = self.current();
        // Borrowed from the loaded map: no reference count touched on the hot path.
        let families = here.families.load();
        match families.get(template.base_name()) {
            Some(family) => here.keyed_in(family, template, vouching, key, None),
            None => {
                drop(families);
                let family = here.family_for(template);
                here.keyed_in(&family, template, vouching, key, None)
            }
        }
    }

    /// The key's breaker in `family`. `hot` (a call site of the process-wide registry) lets
    /// this thread's recent keys at that site answer a key formatted with `Display` (an
    /// integer or a text was looked for already), and remembers what was found.
    fn keyed_in(
        &self,
        family: &Family,
        template: &BreakerConfig,
        vouching: Option<&'static BreakerConfig>,
        key: Key<'_>,
        hot: Option<Hot>,
    ) -> Breaker {
        let here = self;
        let lookup = |key: &str| {
            let hash = family.hash(key);
            match family.get(hash, key) {
                Found::Own(b) => Ok(b),
                // Boxed: the config is large and this is the rare path (a new key).
                Found::Missing => Err(Box::new((hash, template.with_key(key)))),
            }
        };
        // Most keys are short and need no encoding: integers and strings as they are, others
        // formatted on the stack, no thread-local.
        let mut small = key_name::StackKey::new();
        let plain = small.plain_key(key.form, key.display);
        // How the key is remembered: an integer by value, anything else plain by its bytes.
        let probe = match key.form {
            KeyForm::Unsigned(n) => Some(Probe::Int(n, false)),
            KeyForm::Signed(n) => Some(Probe::Int(n.unsigned_abs(), n < 0)),
            KeyForm::Str(_) | KeyForm::Display => plain.map(Probe::Text),
        };
        let hot = hot.zip(probe);
        if let (Some((h, p)), KeyForm::Display) = (hot, key.form) {
            if let Some(b) = hot_keys::get(h.site, h.generation, p) {
                return b;
            }
        }
        let found = match plain {
            Some(plain) => {
                let hash = family.hash_bytes(plain);
                match family.get_bytes(hash, plain) {
                    Found::Own(b) => Ok(b),
                    // A plain key is printable ASCII: its bytes are always its `str`.
                    Found::Missing => match std::str::from_utf8(plain) {
                        Ok(key) => Err(Box::new((hash, template.with_key(key)))),
                        Err(_) => lookup(&String::from_utf8_lossy(plain)),
                    },
                }
            }
            None => KEY_BUF.with(|buf| {
                // A key whose Display re-enters the registry gets fresh buffers, not a panic.
                let mut local = (String::new(), String::new());
                let mut guard = buf.try_borrow_mut().ok();
                let (raw, encoded) = guard.as_deref_mut().unwrap_or(&mut local);
                raw.clear();
                let _ = write!(raw, "{}", key.display);
                let key = if key_name::encode(raw, encoded) {
                    encoded.as_str()
                } else {
                    raw.as_str()
                };
                lookup(key)
            }),
        };
        let b = match found {
            Ok(b) => b,
            Err(missing) => {
                let (hash, config) = *missing;
                let b = family.insert(hash, config, &here.events);
                here.override_new_breaker(&b);
                b
            }
        };
        // Only the key's own breaker with the site's settings is remembered: the overflow
        // breaker and a conflict (counted and logged per call) take this path every time.
        let remember = |b: &Breaker| {
            if let Some((h, probe)) = hot {
                if b.config().key().map(str::as_bytes) == plain {
                    hot_keys::missed(h.site, h.generation, probe, b);
                }
            }
        };
        if vouching.is_some_and(|t| family.vouched(t)) {
            remember(&b);
            return b;
        }
        if !b.0.code_config().same_settings(template) {
            let wanted = template.with_key(b.config().key().unwrap_or_default());
            return checked(b, &wanted);
        }
        if let Some(t) = vouching {
            family.vouch(t);
        }
        remember(&b);
        b
    }

    /// Declares the keyed name of `template` before any of its keys is called (a keyed tower
    /// layer when it is built), as an annotated keyed site is from the start: overrides of
    /// its keys are then checked against it at start, and count as declared.
    #[cfg(feature = "tower")]
    pub(crate) fn declare_keyed(&self, template: &BreakerConfig) {
        self.current().family_for(template);
    }

    /// The keyed name of `config`, made (with `config`'s `max_keys`) on first use.
    fn family_for(&self, config: &BreakerConfig) -> Arc<Family> {
        let base = config.base_name();
        if let Some(f) = self.families.load().get(base) {
            return f.clone();
        }
        let fresh = Arc::new(Family::new(config));
        let _w = lock(&self.families_writer);
        let cur = self.families.load().clone();
        if let Some(f) = cur.get(base) {
            return f.clone();
        }
        let mut next = Families::clone(&cur);
        next.insert(fresh.base.clone(), fresh.clone());
        self.families.store(Arc::new(next));
        drop(_w);
        let prefix = format!("{base}/");
        for (name, b) in read(&self.breakers).iter() {
            if name.starts_with(&prefix) {
                shared_name(b, base);
            }
        }
        fresh
    }

    /// The bulkhead of `config.name()`, created if new; conflicts as for [`register`](Self::register).
    pub fn register_bulkhead(&self, config: BulkheadConfig) -> Bulkhead {
        let here = self.current();
        let mut map = write(&here.bulkheads);
        if let Some(b) = map.get(&config.name) {
            if b.0.config != config {
                bump(&b.0.conflicts);
                tracing::error!(
                    bulkhead = %config.name,
                    kept = ?b.0.config,
                    ignored = ?config,
                    "bulkhead registered twice with different settings; keeping the first"
                );
            }
            return b.clone();
        }
        let b = Bulkhead::new(config);
        map.insert(b.0.config.name.clone(), b.clone());
        drop(map);
        here.override_new_bulkhead(&b);
        b
    }
}

/// An integer or a text is looked for as it is: found, its digits are never written. A key
/// that needs encoding never matches (every remembered key is plain), nor a key only `Display`.
#[inline(always)]
fn probe(form: KeyForm<'_>) -> Option<Probe<'_>> {
    match form {
        KeyForm::Unsigned(n) => Some(Probe::Int(n, false)),
        KeyForm::Signed(n) => Some(Probe::Int(n.unsigned_abs(), n < 0)),
        KeyForm::Str(s) => Some(Probe::Text(s.as_bytes())),
        KeyForm::Display => None,
    }
}

/// A keyed call site of the process-wide registry, and its family's generation read before
/// the lookup (a removal after it makes what the lookup found stale).
#[derive(Clone, Copy)]
struct Hot {
    site: usize,
    generation: u64,
}

impl Hot {
    #[inline]
    fn new(site: usize, family: &Family) -> Hot {
        Hot {
            site,
            generation: family.generation(),
        }
    }
}

/// A key as a lookup takes it: its form (integers and text written without `core::fmt`) and
/// its `Display`, for everything else.
#[derive(Clone, Copy)]
pub(crate) struct Key<'a> {
    pub(crate) form: KeyForm<'a>,
    pub(crate) display: &'a dyn fmt::Display,
}

fn checked(existing: Breaker, wanted: &BreakerConfig) -> Breaker {
    if existing.0.code_config() != wanted {
        let before = existing.0.counters.conflicts.fetch_add(1, Relaxed);
        // A conflicting keyed call site meets this on every call: log the 1st, 2nd, 4th, 8th...
        // occurrence, so the ERROR stays loud without flooding the log; metrics count them all.
        if before == 0 || before.is_power_of_two() {
            tracing::error!(
                breaker = %wanted.name(),
                kept = ?existing.0.code_config(),
                ignored = ?wanted,
                conflicts = before + 1,
                "circuit breaker registered twice with different settings; keeping the first"
            );
        }
    }
    existing
}

impl BreakerBuilder {
    /// Validates, then returns the registry's breaker of this name (creating it if new).
    ///
    /// When a breaker of this name already exists with other settings, the first settings are
    /// kept, the conflict is logged at ERROR and counted in its metrics.
    pub fn build(&self) -> Result<Breaker, ConfigError> {
        Ok(registry().register(self.config()?))
    }
}

impl BulkheadBuilder {
    /// Validates, then returns the registry's bulkhead of this name (creating it if new).
    pub fn build(&self) -> Result<Bulkhead, ConfigError> {
        Ok(registry().register_bulkhead(self.config()?))
    }
}

/// A plain breaker named like a key of the keyed name `base` (`search/eu` beside
/// `#[breaker(name = "search", key = ..)]`): the key `eu` would be a second breaker of the
/// same name, listed twice and reached by name as the plain one only. Logged at ERROR and
/// counted in the plain one's `conflicts`, as two settings under one name are; names are
/// data (a `/` in one is allowed), so nothing is refused.
fn shared_name(plain: &Breaker, base: &str) {
    bump(&plain.0.counters.conflicts);
    tracing::error!(
        breaker = %plain.name(),
        keyed = %base,
        "a breaker is named like a key of a keyed breaker: its key would be a second breaker of that name; name one of them otherwise"
    );
}
