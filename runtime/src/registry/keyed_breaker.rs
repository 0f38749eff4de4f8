//! One keyed call's breaker (`#[breaker(key = ...)]`): what the call site and the key are,
//! and the breaker kept for the call once it needs one of its own.
//!
//! Generated code binds one per call, before the call's future, and hands it to that future
//! by reference (`run_keyed`), so the breaker kept here outlives the future. An integer key's
//! first poll borrows the breaker from this thread's recent keys instead (`Lend::lend`, through
//! `hot_keys::lend`), with no reference count taken: a call that answers then never keeps one
//! (`breaker/keyed_call.rs` says why).

use std::fmt;

use once_cell::sync::OnceCell;

use super::hot_keys;
use super::key_form::KeyForm;
use super::keyed::KeyedSite;
use super::{registry, Key};
use crate::breaker::{Breaker, Lend, Loan};

/// The breaker of one call at a keyed call site: the site, and the key's breaker or the
/// integer key to find it by. Made by generated code (`#[breaker(key = ...)]`), not by users.
///
/// It borrows nothing from the call: the function's body may move what the key was read from
/// (`key = self.shard` in a method taking `self: Arc<Self>`). So only an integer key, copied,
/// waits for the first poll; a text or `Display` key is looked up when this is made, as before
/// (its breaker kept at once).
#[doc(hidden)]
pub struct KeyedBreaker {
    site: &'static KeyedSite,
    breaker: Found,
}

/// A keyed call's breaker, found when the call was made or to be found by its integer key.
enum Found {
    /// An integer key: its breaker is lent for the first poll (`Lend::lend`), and kept here
    /// only if the call needs one of its own.
    Later(IntKey, OnceCell<Breaker>),
    /// Found when the call was made: a text or `Display` key's, or any key's with `keep_now`.
    Now(Breaker),
}

/// An integer key, copied.
#[derive(Clone, Copy)]
enum IntKey {
    Unsigned(u64),
    Signed(i64),
}

impl IntKey {
    fn form(self) -> KeyForm<'static> {
        match self {
            IntKey::Unsigned(n) => KeyForm::Unsigned(n),
            IntKey::Signed(n) => KeyForm::Signed(n),
        }
    }
}

impl KeyedBreaker {
    /// The key `display` (as [`KeyForm`] found it: `form`) at `site`. An integer is looked up
    /// when the call is first polled, anything else (or any key, with `keep_now`) now.
    #[inline(always)]
    pub fn new(
        site: &'static KeyedSite,
        form: KeyForm<'_>,
        display: &dyn fmt::Display,
        keep_now: bool,
    ) -> Self {
        let int = match form {
            KeyForm::Unsigned(n) => Some(IntKey::Unsigned(n)),
            KeyForm::Signed(n) => Some(IntKey::Signed(n)),
            KeyForm::Str(_) | KeyForm::Display => None,
        };
        let breaker = match int {
            Some(int) if !keep_now => Found::Later(int, OnceCell::new()),
            _ => Found::Now(found(site, form, display)),
        };
        KeyedBreaker { site, breaker }
    }

    /// The key's breaker, kept for the call (looked up once): what the stale cache and
    /// retries name.
    pub fn breaker(&self) -> &Breaker {
        self.keep(None)
    }

    /// The integer key `int`'s breaker, looked up.
    fn look_up(&self, int: IntKey) -> Breaker {
        let site = self.site;
        match int {
            IntKey::Unsigned(n) => {
                let form = KeyForm::Unsigned(n);
                registry().keyed_site_unprobed(site, Key { form, display: &n })
            }
            IntKey::Signed(n) => {
                let form = KeyForm::Signed(n);
                registry().keyed_site_unprobed(site, Key { form, display: &n })
            }
        }
    }
}

impl Lend for KeyedBreaker {
    type Loan = hot_keys::Lent;

    #[inline(always)]
    fn lend(&self) -> Option<hot_keys::Lent> {
        // A breaker kept already (a text key's, or the stale cache's) is used from there.
        let Found::Later(int, kept) = &self.breaker else {
            return None;
        };
        if kept.get().is_some() {
            return None;
        }
        let (site, generation, probe) = registry().hot_probe(self.site, int.form())?;
        hot_keys::lend(site, generation, probe)
    }

    #[inline(always)]
    fn kept(&self) -> Option<&Breaker> {
        match &self.breaker {
            Found::Later(_, kept) => kept.get(),
            Found::Now(b) => Some(b),
        }
    }

    fn keep(&self, lent: Option<&hot_keys::Lent>) -> &Breaker {
        match &self.breaker {
            Found::Later(int, kept) => kept.get_or_init(|| match lent {
                Some(l) => l.breaker(),
                None => self.look_up(*int),
            }),
            Found::Now(b) => b,
        }
    }
}

/// A text or `Display` key's breaker, looked up when its call's `KeyedBreaker` is made.
#[inline(never)]
fn found(site: &'static KeyedSite, form: KeyForm<'_>, display: &dyn fmt::Display) -> Breaker {
    registry().keyed_site(site, Key { form, display })
}
