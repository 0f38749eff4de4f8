//! Live settings of a bulkhead (issue 29): `pool` (of a fixed pool) and `max_wait` changed
//! while it runs, from the start's overrides or a live change (admin, fleet).
//!
//! The pool's slots are one atomic `limit` and its wait one atomic `max_wait`, so a change is
//! two stores: calls holding a slot keep it (a smaller pool admits again once enough of them
//! ended), waiters are woken to look at a larger pool at once, and a wait already started keeps
//! the deadline it started with. An adaptive limit takes new bounds (`min_pool`, `max_pool`)
//! under its algorithm's lock, and a new `pool` as the limit it starts again from; the limit
//! is kept within the bounds in force. The limit's kind (`limit`: fixed or adaptive) is the
//! code's: changing it is refused with the reason, as are an adaptive's bounds on a fixed pool.
//!
//! A change given `for` a time lapses on the first look after it (a call the pool would make
//! wait or refuse, `settings_in_force`) and by a timer task when made inside a tokio runtime;
//! `metrics()` reports it lapsed without ending it (`Bulkhead::seen_now`).

use std::sync::Arc;
use std::time::Duration;

use fusebox_settings::{nanos, ConfigError, PoolLimit, Source};
use tokio::time::Instant;

use super::config::BulkheadConfig;
use super::Bulkhead;
use crate::settings::in_force::{self, SettingInForce};
use crate::sync::atomic::Ordering::*;
use crate::sync::lock;

/// The settings in force over the code's.
pub(crate) struct Layer {
    pub(crate) config: BulkheadConfig,
    pub(crate) settings: Arc<[SettingInForce]>,
    pub(crate) given: Vec<(String, String)>,
    pub(crate) source: Source,
    pub(crate) until: Option<Instant>,
    pub(crate) below: Option<Arc<Layer>>,
}

/// The keys a running bulkhead changes.
const LIVE_KEYS: &str =
    "a running bulkhead changes `pool` and `max_wait`, and an adaptive one `min_pool` and `max_pool`; the limit's kind (fixed or adaptive) is the code's";

impl Bulkhead {
    /// Every setting in force, with the code's value and where the one in force came from.
    ///
    /// ```
    /// use fusebox::Bulkhead;
    /// use fusebox::settings::Source;
    /// let b = Bulkhead::builder("bulkhead-in-force-doc").pool(4).build_detached().unwrap();
    /// b.change_settings([("pool", "8")], Source::Admin, None).unwrap();
    /// let pool = b.settings_in_force().into_iter().find(|s| s.key == "pool").unwrap();
    /// assert_eq!((pool.value.as_str(), pool.source), ("8", Source::Admin));
    /// assert_eq!(b.pool(), 8);
    /// ```
    pub fn settings_in_force(&self) -> Vec<SettingInForce> {
        self.settings_shared().to_vec()
    }

    /// The settings in force, shared (the metrics' field).
    pub(crate) fn settings_shared(&self) -> Arc<[SettingInForce]> {
        self.lapse();
        match self.0.live.load().as_ref() {
            Some(l) => l.settings.clone(),
            None => in_force::from_code(code_text(&self.0.config)).into(),
        }
    }

    /// The settings in force (the code's, or an override's).
    ///
    /// ```
    /// use fusebox::Bulkhead;
    /// use fusebox::settings::Source;
    /// let b = Bulkhead::builder("bulkhead-config-doc").pool(4).build_detached().unwrap();
    /// b.change_settings([("pool", "6")], Source::Admin, None).unwrap();
    /// assert_eq!((b.config_in_force().pool(), b.config().pool()), (6, 4));
    /// ```
    pub fn config_in_force(&self) -> BulkheadConfig {
        self.lapse();
        match self.0.live.load().as_ref() {
            Some(l) => l.config.clone(),
            None => self.0.config.clone(),
        }
    }

    /// Changes `pool` or `max_wait` while the bulkhead runs, checked by the settings table
    /// over the settings below this change (the start's overrides, else the code's); replaces
    /// the previous live change; `for_` lapses it. Calls holding a slot keep it. Logged at
    /// WARN. The admin router and the fleet call this.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusebox::Bulkhead;
    /// use fusebox::settings::{ConfigError, Source};
    /// let b = Bulkhead::builder("bulkhead-change-doc").pool(4).build_detached().unwrap();
    /// let e = b.change_settings([("pool", "0")], Source::Admin, None).unwrap_err();
    /// assert!(matches!(e, ConfigError::OutOfRange { field: "pool", .. }));
    /// b.change_settings([("max_wait", "20ms")], Source::Admin, None).unwrap();
    /// assert_eq!(b.config_in_force().max_wait(), Duration::from_millis(20));
    /// assert!(b.clear_settings_change());
    /// assert_eq!(b.config_in_force().max_wait(), Duration::ZERO);
    /// ```
    pub fn change_settings<K, V>(
        &self,
        pairs: impl IntoIterator<Item = (K, V)>,
        source: Source,
        for_: Option<Duration>,
    ) -> Result<(), ConfigError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let pairs: Vec<(String, String)> = crate::settings::text::trimmed_pairs(pairs);
        self.lapse();
        let until = for_.and_then(|d| Instant::now().checked_add(d));
        let _w = lock(&self.0.live_writer);
        let cur = self.0.live.load_full();
        let below = match cur.as_ref() {
            Some(l) if is_change(l) => l.below.clone(),
            other => other.cloned(),
        };
        let layer = self.layer(below, &[], pairs.clone(), source, until)?;
        self.install(Some(Arc::new(layer)));
        tracing::warn!(
            bulkhead = %self.0.config.name,
            %source,
            settings = ?pairs,
            r#for = ?for_,
            "bulkhead settings changed while running"
        );
        if let (Some(until), Ok(rt)) = (until, tokio::runtime::Handle::try_current()) {
            let me = self.clone();
            rt.spawn(async move {
                tokio::time::sleep_until(until).await;
                me.lapse();
            });
        }
        Ok(())
    }

    /// Ends the live change (admin or fleet), if any: the start's overrides, else the code's
    /// settings, return. Returns whether one was in force (the example of
    /// [`change_settings`](Self::change_settings) ends one).
    pub fn clear_settings_change(&self) -> bool {
        self.clear_change_where(is_change)
    }

    /// Ends the live change if it came from `source` (the fleet lifting its own).
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub(crate) fn clear_change_from(&self, source: Source) -> bool {
        self.clear_change_where(|l| is_change(l) && l.source == source)
    }

    fn clear_change_where(&self, which: impl Fn(&Layer) -> bool) -> bool {
        let _w = lock(&self.0.live_writer);
        let cur = self.0.live.load_full();
        let Some(l) = cur.as_ref().filter(|l| which(l)) else {
            return false;
        };
        self.install(l.below.clone());
        tracing::warn!(bulkhead = %self.0.config.name, "bulkhead settings change ended");
        true
    }

    /// Sets the start's overrides; a live change in force is made again over them.
    pub(crate) fn override_at_start(
        &self,
        pairs: Vec<(String, String)>,
        sources: Vec<(String, Source)>,
        source: Source,
    ) -> Result<(), ConfigError> {
        let _w = lock(&self.0.live_writer);
        let cur = self.0.live.load_full();
        let start = if pairs.is_empty() {
            None
        } else {
            Some(Arc::new(self.layer(None, &sources, pairs, source, None)?))
        };
        let next = match cur.as_ref().filter(|l| is_change(l)) {
            Some(c) => Some(Arc::new(self.layer(
                start,
                &[],
                c.given.clone(),
                c.source,
                c.until,
            )?)),
            None => start,
        };
        self.install(next);
        Ok(())
    }

    /// The pairs a start override would give, checked without applying them.
    pub(crate) fn check_overrides(&self, pairs: &[(String, String)]) -> Result<(), ConfigError> {
        self.layer(None, &[], pairs.to_vec(), Source::Code, None)
            .map(drop)
    }

    /// What a metrics snapshot reads, read only: the pool, the settings in force and the time
    /// left once a change past its time lapsed, without ending it (the breaker's
    /// `Core::live_seen_at`: a snapshot may be taken on another runtime's clock). An adaptive
    /// limit's pool is its value now.
    pub(crate) fn seen_now(&self) -> (usize, Arc<[SettingInForce]>, Option<Duration>) {
        let now = Instant::now();
        let cur = self.0.live.load_full();
        let mut at = cur.clone();
        while let Some(l) = at.as_ref().filter(|l| l.until.is_some_and(|u| now >= u)) {
            at = l.below.clone();
        }
        let lapsed = !crate::sync::same(cur.as_ref(), at.as_ref());
        let pool = match (&at, self.0.config.limit) {
            (Some(l), PoolLimit::Fixed) if lapsed => l.config.pool,
            (None, PoolLimit::Fixed) if lapsed => self.0.config.pool,
            _ => self.pool(),
        };
        let settings = match &at {
            Some(l) => l.settings.clone(),
            None => in_force::from_code(code_text(&self.0.config)).into(),
        };
        let left = at
            .as_ref()
            .and_then(|l| l.until)
            .map(|u| u.saturating_duration_since(now));
        (pool, settings, left)
    }

    /// Ends a change past its time: what is below it returns.
    pub(crate) fn lapse(&self) {
        let cur = self.0.live.load_full();
        let Some(l) = cur.as_ref() else { return };
        if l.until.is_none_or(|u| Instant::now() < u) {
            return;
        }
        let _w = lock(&self.0.live_writer);
        let again = self.0.live.load_full();
        if !again.as_ref().is_some_and(|a| Arc::ptr_eq(a, l)) {
            return;
        }
        tracing::warn!(
            bulkhead = %self.0.config.name,
            source = %l.source,
            settings = ?l.given,
            "bulkhead settings change lapsed; the settings below it return"
        );
        self.install(l.below.clone());
    }

    #[allow(clippy::too_many_arguments)]
    fn layer(
        &self,
        below: Option<Arc<Layer>>,
        sources: &[(String, Source)],
        given: Vec<(String, String)>,
        source: Source,
        until: Option<Instant>,
    ) -> Result<Layer, ConfigError> {
        let keyed = crate::settings::in_force::by_key(&given, source, sources);
        let code = &self.0.config;
        let base = below.as_ref().map_or(code, |b| &b.config);
        let adaptive = code.limit != PoolLimit::Fixed;
        for (k, v) in &given {
            let live = match k.as_str() {
                "pool" | "max_wait" => true,
                "min_pool" | "max_pool" => adaptive,
                _ => false,
            };
            if !live {
                // A key that is not a bulkhead's at all keeps the table's own error.
                if fusebox_settings::BULKHEAD_KEYS.contains(&k.as_str()) {
                    return Err(ConfigError::OutOfRange {
                        field: fusebox_settings::Key::from_name(k).map_or("pool", |k| k.name()),
                        value: v.clone(),
                        expected: LIVE_KEYS,
                    });
                }
            }
        }
        let s = settings_of(base)
            .with_overrides(given.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
        let config = BulkheadConfig {
            name: code.name.clone(),
            pool: s.pool(),
            max_wait: s.max_wait(),
            limit: s.limit(),
        };
        let settings = in_force::attribute(
            &code_text(code),
            below.as_ref().map(|b| &b.settings[..]),
            code_text(&config),
            &keyed,
            source,
        );
        Ok(Layer {
            config,
            settings: settings.into(),
            given,
            source,
            until,
            below,
        })
    }

    /// Puts `next` in force: the limit and the wait are the pool's atomics.
    fn install(&self, next: Option<Arc<Layer>>) {
        let p = &*self.0;
        let config = next.as_ref().map_or(&p.config, |l| &l.config);
        let before = p.limit.load(Acquire);
        match (&p.adaptive, config.limit) {
            (None, _) => p.limit.store(config.pool, Release),
            (Some(a), PoolLimit::Adaptive { min_pool, max_pool }) => {
                // A changed `pool` is where the limit starts again; otherwise it stays where
                // the algorithm had it, within the bounds in force.
                let was = p
                    .live
                    .load()
                    .as_ref()
                    .map_or(p.config.pool, |l| l.config.pool);
                let start = (config.pool != was).then_some(config.pool);
                a.rebound(&p.limit, start, min_pool, max_pool);
            }
            // The kind is the code's (`layer` refuses a change of it).
            (Some(_), _) => {}
        }
        if p.limit.load(Acquire) > before {
            // Waiters look again at once: a larger pool has room now.
            p.freed.notify_waiters();
        }
        p.max_wait.store(nanos(config.max_wait), Relaxed);
        p.live.store(next);
    }
}

fn is_change(l: &Layer) -> bool {
    matches!(l.source, Source::Admin | Source::Fleet)
}

fn settings_of(c: &BulkheadConfig) -> fusebox_settings::BulkheadSettings {
    fusebox_settings::BulkheadSettings::__validated(fusebox_settings::BulkheadParts {
        pool: c.pool,
        max_wait: c.max_wait,
        limit: c.limit,
    })
}

fn code_text(c: &BulkheadConfig) -> Vec<(&'static str, String)> {
    settings_of(c).to_text()
}
