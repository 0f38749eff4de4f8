//! Serving the last good value while a breaker rejects or its dependency fails (`stale_for`):
//! the bounded cache itself, and the per-call-site caches the generated code uses.

mod cache;
#[cfg(feature = "testing")]
pub(crate) mod scoped;
mod site;

pub use cache::{Stale, StaleCache};
pub use site::{
    stale_get, stale_key_part, stale_put, Part, StaleHandle, StaleKey, StaleKeyClone, StaleKeyEq,
    StaleKeyHash, StaleKeyPart, StaleRef, StaleSite, StaleValue,
};
