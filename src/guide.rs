//! The guides: how to use fusebox for each job, beyond the reference on
//! [`#[breaker]`](crate::breaker) and [`#[bulkhead]`](crate::bulkhead). Every code block in them
//! is compiled (and most run) as a doc test.
//!
//! | guide | read it to |
//! |---|---|
//! | [`recovery`] | let a dependency back in: half-open shares, probes, ramps |
//! | [`keyed`] | give each shard, tenant or host a breaker of its own, bounded |
//! | [`stale`] | answer with the last good value while a dependency is away |
//! | [`settings`] | override settings at start (environment, a file), change them live, try a change in a shadow |
//! | [`operations`] | see breakers (metrics, alerts) and act on them (admin router) |
//! | [`fleet`] | share overrides and quorums across instances on Redis |
//! | [`testing`] | test code that uses breakers, in parallel, on a paused clock |
//! | [`tower`] | put the same breakers on tower services |
//! | [`replay`] | see what the project's replay of real outages shows, case by case |

#[doc = include_str!("../docs/guide/recovery.md")]
pub mod recovery {}

#[doc = include_str!("../docs/guide/replay.md")]
pub mod replay {}

#[doc = include_str!("../docs/guide/keyed.md")]
pub mod keyed {}

#[doc = include_str!("../docs/guide/stale.md")]
pub mod stale {}

#[cfg_attr(feature = "serde", doc = include_str!("../docs/guide/settings.md"))]
#[cfg_attr(
    not(feature = "serde"),
    doc = "Settings outside the code: overrides at start and live changes (this guide needs feature `serde`)."
)]
pub mod settings {}

// The guides that use a feature's items show in full where it is on (docs.rs turns on all).
#[cfg_attr(feature = "admin", doc = include_str!("../docs/guide/operations.md"))]
#[cfg_attr(
    not(feature = "admin"),
    doc = "Operations: metrics, alerts and the admin router (this guide needs feature `admin`)."
)]
pub mod operations {}

#[cfg_attr(feature = "redis", doc = include_str!("../docs/guide/fleet.md"))]
#[cfg_attr(
    not(feature = "redis"),
    doc = "Fleet mode on Redis (this guide needs feature `redis`)."
)]
pub mod fleet {}

#[cfg_attr(feature = "testing", doc = include_str!("../docs/guide/testing.md"))]
#[cfg_attr(
    not(feature = "testing"),
    doc = "Testing with fusebox (this guide needs feature `testing`)."
)]
pub mod testing {}

#[cfg_attr(feature = "tower", doc = include_str!("../docs/guide/tower.md"))]
#[cfg_attr(
    not(feature = "tower"),
    doc = "Tower middleware (this guide needs feature `tower`)."
)]
pub mod tower {}
