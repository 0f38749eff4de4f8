//! The one background task of a process in fleet mode: heartbeat, read, apply, expire, reconnect.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;

use super::link::{self, Backoff};
use super::shared::Shared;
use super::sync::sync;

/// Runs until `stop` fires or its sender is dropped. `first` is told after the first exchange
/// (or failed connection), so `join` can return as soon as the warm start is done.
pub(crate) async fn run(
    shared: Arc<Shared>,
    mut stop: oneshot::Receiver<()>,
    first: oneshot::Sender<()>,
) {
    let mut first = Some(first);
    let mut backoff = Backoff::new(Duration::from_millis(100), shared.config.reconnect_max);
    let mut conn = None;
    let mut next_tick = Instant::now();
    loop {
        let wake = shared.next_expiry().map_or(next_tick, |e| e.min(next_tick));
        tokio::select! {
            biased;
            _ = &mut stop => break,
            _ = tokio::time::sleep_until(wake) => {}
        }
        // Expiry is timed here, on this instance's clock: Redis being away changes nothing.
        shared.expire();
        let started = Instant::now();
        if started < next_tick {
            continue;
        }
        if conn.is_none() {
            match link::connect(&shared.client, shared.op_timeout()).await {
                Ok(c) => conn = Some(c),
                Err(e) => shared.down(e),
            }
        }
        next_tick = match conn.as_mut() {
            Some(c) => match sync(&shared, c).await {
                Ok(()) => {
                    backoff.reset();
                    if let Some(c) = conn.clone() {
                        shared.up(c);
                    }
                    started + shared.config.heartbeat
                }
                Err(e) => {
                    conn = None;
                    shared.down(e);
                    Instant::now() + backoff.next_delay()
                }
            },
            None => Instant::now() + backoff.next_delay(),
        };
        if let Some(tx) = first.take() {
            let _ = tx.send(());
        }
    }
}
