//! The connection to Redis: connect with a deadline, back off with jitter, say what state it is in.

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::AsyncConnectionConfig;

/// The state of this instance's link to Redis, as the fleet task last found it: `connecting`
/// until the first exchange ends, then `up` or `down`. Calls never wait on Redis in any state;
/// what each state means for overrides, quorums and the gauges is in
/// [the fleet module's reference](super#the-links-states).
///
/// ```
/// use fusebox::fleet::LinkState;
/// assert_eq!(LinkState::Up.as_str(), "up");
/// if let Some(s) = fusebox::fleet::status() {
///     match s.link {
///         LinkState::Up => println!("overrides reach the fleet"),
///         LinkState::Connecting | LinkState::Down => println!("on our own: {:?}", s.last_error),
///     }
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkState {
    /// No exchange with Redis has ended yet: what [`join`](super::join) leaves when Redis has
    /// not answered within the warm-start wait (one that accepts but never answers). No
    /// override read, no quorum counted; a send fails with
    /// [`LinkDown`](super::FleetError::LinkDown); `fusebox_fleet_link_up` reads 0 and
    /// `fusebox_fleet_live_instances` 1. Turns `down` once the exchange's bound passes.
    Connecting,
    /// The last exchange with Redis succeeded: sends reach every live instance at its next
    /// read, quorums are judged on a fresh view; `fusebox_fleet_link_up` reads 1.
    Up,
    /// The last connection or exchange failed (refused, reset, timed out, an error reply); the
    /// task is reconnecting with backoff. A send fails with
    /// [`LinkDown`](super::FleetError::LinkDown); overrides held end on time; quorums are frozen
    /// (none opens on a stale view); `fusebox_fleet_link_up` reads 0 and
    /// `fusebox_fleet_live_instances` keeps the last successful read.
    Down,
}
impl LinkState {
    /// `connecting`, `up` or `down`: the `state` label of `fusebox_fleet_link_state` and the
    /// `link` of `GET /fleet`.
    ///
    /// ```
    /// assert_eq!(fusebox::fleet::LinkState::Connecting.as_str(), "connecting");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            LinkState::Connecting => "connecting",
            LinkState::Up => "up",
            LinkState::Down => "down",
        }
    }

    pub(crate) fn code(self) -> u8 {
        self as u8
    }

    pub(crate) fn from_code(c: u8) -> LinkState {
        match c {
            1 => LinkState::Up,
            2 => LinkState::Down,
            _ => LinkState::Connecting,
        }
    }
}

/// Opens a multiplexed connection within two bounds of `timeout` (TCP, then the handshake).
///
/// Each exchange on it is bounded by its caller (`timeout` again); the connection's own
/// timeouts are the first attempt's, two bounds, as the module says: a Redis that accepts and
/// never answers keeps the link `connecting` past `join`'s default wait (half a second, one
/// bound by default), where at one bound the two ended together and `join` found the link
/// `down` as often as not.
pub(crate) async fn connect(
    client: &redis::Client,
    timeout: Duration,
) -> Result<MultiplexedConnection, String> {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(timeout * 2)
        .set_response_timeout(timeout * 2);
    // The client's own timeouts cover TCP, the handshake and each command; this one covers
    // TLS and AUTH too.
    let limit = timeout * 2;
    match tokio::time::timeout(
        limit,
        client.get_multiplexed_async_connection_with_config(&config),
    )
    .await
    {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no connection within {limit:?}")),
    }
}

/// Exponential backoff with "equal jitter": half the step fixed, half random, so a fleet
/// that lost Redis together does not reconnect in lockstep.
pub(crate) struct Backoff {
    attempt: u32,
    base: Duration,
    max: Duration,
    rng: u64,
}

impl Backoff {
    pub(crate) fn new(base: Duration, max: Duration) -> Backoff {
        // A per-process random seed without a dependency: std's hasher keys are random.
        let seed = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        Backoff {
            attempt: 0,
            base,
            max: max.max(base),
            rng: seed | 1,
        }
    }

    /// The pause before the next attempt.
    pub(crate) fn next_delay(&mut self) -> Duration {
        let step = self
            .base
            .saturating_mul(1u32 << self.attempt.min(16))
            .min(self.max);
        self.attempt = self.attempt.saturating_add(1);
        // xorshift64: plenty for spreading reconnects.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let half = step / 2;
        half + half.mul_f64((self.rng >> 11) as f64 / (1u64 << 53) as f64)
    }

    pub(crate) fn reset(&mut self) {
        self.attempt = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_to_its_cap_with_jitter_and_resets() {
        let (base, max) = (Duration::from_millis(100), Duration::from_secs(2));
        let mut b = Backoff::new(base, max);
        let first = b.next_delay();
        assert!(first >= base / 2 && first <= base, "{first:?}");
        let delays: Vec<Duration> = (0..10).map(|_| b.next_delay()).collect();
        assert!(delays.iter().all(|d| *d <= max && *d >= base / 2));
        assert!(delays[9] >= max / 2, "reaches the cap: {delays:?}");
        let distinct: std::collections::HashSet<_> = delays[5..].iter().collect();
        assert!(distinct.len() > 1, "jittered: {delays:?}");
        b.reset();
        assert!(b.next_delay() <= base);
    }

    #[test]
    fn link_state_codes_round_trip() {
        for s in [LinkState::Connecting, LinkState::Up, LinkState::Down] {
            assert_eq!(LinkState::from_code(s.code()), s);
        }
    }
}
