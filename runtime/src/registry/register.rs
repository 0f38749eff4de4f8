//! Making and finding entries: a breaker per name, a keyed breaker per `name/key`, a bulkhead
//! per name, and the builders' `build`, which register what they validated.
//!
//! A name registered again with other settings keeps its first settings: the conflict is
//! logged at ERROR and counted in the entry's metrics (`conflicts`), never silently mixed.

use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::sync::atomic::Ordering::Relaxed;

use super::{read, registry, write, Registry};
use crate::breaker::core::bump;
use crate::breaker::Breaker;
use crate::bulkhead::{Bulkhead, BulkheadBuilder, BulkheadConfig};
use crate::error::ConfigError;
use crate::settings::{BreakerBuilder, BreakerConfig};

thread_local! {
    static KEY_BUF: RefCell<String> = const { RefCell::new(String::new()) };
}

impl Registry {
    /// The breaker of `config.name()`, created with `config` if new.
    ///
    /// A name registered before with other settings keeps its first settings: the conflict is
    /// logged at ERROR and counted in its metrics (`conflicts`), never silently mixed.
    pub fn register(&self, config: BreakerConfig) -> Breaker {
        let here = self.current();
        if let Some(b) = read(&here.breakers).get(config.name()).cloned() {
            return checked(b, &config);
        }
        let mut map = write(&here.breakers);
        if let Some(b) = map.get(config.name()) {
            return checked(b.clone(), &config);
        }
        let b = Breaker::with_events(config, here.events.clone());
        map.insert(b.0.config.name.clone(), b.clone());
        b
    }

    /// The breaker for `key` under `template`'s name: `name/key`, created on first use.
    ///
    /// ```
    /// use fusebox_runtime::{registry, Breaker};
    /// let template = Breaker::builder("shard-doc").config().unwrap();
    /// let shard = registry().keyed(&template, &3);
    /// assert_eq!(shard.name(), "shard-doc/3");
    /// assert!(registry().keyed(&template, &3).ptr_eq(&shard));
    /// ```
    pub fn keyed(&self, template: &BreakerConfig, key: &dyn fmt::Display) -> Breaker {
        let here = self.current();
        let found = KEY_BUF.with(|buf| {
            // A key whose Display re-enters the registry gets a fresh buffer instead of a panic.
            let mut local = String::new();
            let mut guard = buf.try_borrow_mut().ok();
            let s = guard.as_deref_mut().unwrap_or(&mut local);
            s.clear();
            s.push_str(template.base_name());
            s.push('/');
            let _ = write!(s, "{key}");
            match read(&here.breakers).get(s.as_str()) {
                Some(b) => Ok(b.clone()),
                None => Err(s[template.base_name().len() + 1..].to_owned()),
            }
        });
        // A call site's template is a `static`: once an entry was created from (or checked
        // against) this very template, its address says "same settings" in one compare.
        let origin = template as *const BreakerConfig as usize;
        match found {
            Ok(b) if b.0.origin.load(Relaxed) == origin => b,
            Ok(b) => {
                if !b.0.config.same_settings(template) {
                    let wanted = template.with_key(b.config().key().unwrap_or_default());
                    return checked(b, &wanted);
                }
                b.0.origin.store(origin, Relaxed);
                b
            }
            Err(key) => {
                let b = here.register(template.with_key(&key));
                if b.0.config.same_settings(template) {
                    b.0.origin.store(origin, Relaxed);
                }
                b
            }
        }
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
        b
    }
}

fn checked(existing: Breaker, wanted: &BreakerConfig) -> Breaker {
    if existing.0.config != *wanted {
        let before = existing.0.counters.conflicts.fetch_add(1, Relaxed);
        // A conflicting keyed call site meets this on every call: log the 1st, 2nd, 4th, 8th...
        // occurrence, so the ERROR stays loud without flooding the log; metrics count them all.
        if before == 0 || before.is_power_of_two() {
            tracing::error!(
                breaker = %wanted.name(),
                kept = ?existing.0.config,
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
