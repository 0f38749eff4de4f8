//! One exchange with Redis: publish the heartbeat, read the fleet, apply what it says.

use std::collections::HashMap;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{from_redis_value, Value};
use tokio::time::Instant;

use super::overrides::Record;
use super::publish::{unix_ms, InstanceReport};
use super::settings::SettingsRecord;
use super::shared::Shared;
use crate::registry::registry;

/// Drops an index entry whose TTL'd key is gone, atomically, so it never races a re-join.
const PRUNE_ZSET: &str =
    "if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('ZREM', KEYS[2], ARGV[1]) end return 0";
const PRUNE_SET: &str =
    "if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SREM', KEYS[2], ARGV[1]) end return 0";

/// Publishes, reads and applies; any Redis error or timeout fails the whole exchange.
pub(crate) async fn sync(shared: &Shared, conn: &mut MultiplexedConnection) -> Result<(), String> {
    let t = shared.op_timeout();
    let keys = &shared.keys;
    let me = shared.config.instance.as_str();
    let own = serde_json::to_string(&shared.own_report()).map_err(|e| e.to_string())?;
    // `join` bounds the TTL; saturating all the same, where `as` would wrap.
    let ttl_ms = u64::try_from(shared.config.ttl_or_default().as_millis()).unwrap_or(u64::MAX);

    let (members, names, settings): (Vec<String>, Vec<String>, Vec<String>) = bounded(
        t,
        redis::pipe()
            .cmd("SET")
            .arg(keys.instance(me))
            .arg(own)
            .arg("PX")
            .arg(ttl_ms)
            .ignore()
            .cmd("ZADD")
            .arg(keys.instances())
            .arg(unix_ms())
            .arg(me)
            .ignore()
            .cmd("ZRANGE")
            .arg(keys.instances())
            .arg(0)
            .arg(-1)
            .cmd("SMEMBERS")
            .arg(keys.overrides())
            .cmd("SMEMBERS")
            .arg(keys.settings())
            .query_async(conn),
    )
    .await?;

    let ids: Vec<&String> = members.iter().filter(|m| *m != me).collect();
    let mut read = redis::pipe();
    for id in &ids {
        read.cmd("GET").arg(keys.instance(id));
    }
    for n in &names {
        read.cmd("GET").arg(keys.override_of(n));
        read.cmd("PTTL").arg(keys.override_of(n));
    }
    for m in &settings {
        read.cmd("GET").arg(keys.settings_of(m));
        read.cmd("PTTL").arg(keys.settings_of(m));
    }
    let values: Vec<Value> = if ids.is_empty() && names.is_empty() && settings.is_empty() {
        Vec::new()
    } else {
        bounded(t, read.query_async(conn)).await?
    };
    let mut values = values.into_iter();
    let mut next = || values.next().unwrap_or(Value::Nil);

    let mut prune = redis::pipe();
    let mut others = Vec::new();
    for id in ids {
        match text(&next()) {
            Some(json) => match serde_json::from_str::<InstanceReport>(&json) {
                Ok(r) => others.push(r),
                Err(e) => tracing::debug!(instance = %id, error = %e, "unreadable fleet heartbeat"),
            },
            None => {
                prune
                    .cmd("EVAL")
                    .arg(PRUNE_ZSET)
                    .arg(2)
                    .arg(keys.instance(id))
                    .arg(keys.instances())
                    .arg(id)
                    .ignore();
            }
        }
    }
    let mut overrides = Vec::new();
    for n in &names {
        let (body, pttl) = (
            text(&next()),
            from_redis_value::<i64>(&next()).unwrap_or(-2),
        );
        match body.map(|b| serde_json::from_str::<Record>(&b)) {
            Some(Ok(mut r)) if pttl > 0 => {
                r.breaker.clone_from(n);
                // Capped: a TTL written by anyone must not overflow a deadline.
                let ttl = Duration::from_millis(pttl as u64).min(super::shared::MAX_OVERRIDE);
                overrides.push((r, ttl));
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => tracing::debug!(breaker = %n, error = %e, "unreadable fleet override"),
            None => {
                prune
                    .cmd("EVAL")
                    .arg(PRUNE_SET)
                    .arg(2)
                    .arg(keys.override_of(n))
                    .arg(keys.overrides())
                    .arg(n)
                    .ignore();
            }
        }
    }
    let mut changes = Vec::new();
    for m in &settings {
        let (body, pttl) = (
            text(&next()),
            from_redis_value::<i64>(&next()).unwrap_or(-2),
        );
        match body.map(|b| serde_json::from_str::<SettingsRecord>(&b)) {
            Some(Ok(r)) if pttl > 0 => {
                let ttl = Duration::from_millis(pttl as u64).min(super::shared::MAX_OVERRIDE);
                changes.push((r, ttl));
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => {
                tracing::debug!(member = %m, error = %e, "unreadable fleet settings change")
            }
            None => {
                prune
                    .cmd("EVAL")
                    .arg(PRUNE_SET)
                    .arg(2)
                    .arg(keys.settings_of(m))
                    .arg(keys.settings())
                    .arg(m)
                    .ignore();
            }
        }
    }
    bounded::<()>(t, prune.query_async(conn)).await?;
    shared.inner().settings.apply(changes);
    apply(shared, others, overrides);
    Ok(())
}

/// Overrides first (an operator's word beats a quorum), then quorum opening.
fn apply(shared: &Shared, others: Vec<InstanceReport>, overrides: Vec<(Record, Duration)>) {
    let now = Instant::now();
    let find = |n: &str| registry().breaker(n);
    let mut inner = shared.inner();
    let mut listed = HashMap::new();
    for (record, remaining) in overrides {
        listed.insert(record.breaker.clone(), record.id.clone());
        inner.overrides.apply(record, remaining, now, find);
    }
    inner.overrides.prune(&listed);
    if !shared.config.quorum.is_empty() {
        for b in registry().breakers() {
            if let Some(rule) = shared.config.quorum.iter().find(|r| r.covers(b.name())) {
                inner.quorum.judge(rule, &b, &others);
            }
        }
    }
    inner.others = others;
    inner.last_sync = Some(now);
}

fn text(v: &Value) -> Option<String> {
    from_redis_value::<Option<String>>(v).ok().flatten()
}

async fn bounded<T>(
    t: Duration,
    fut: impl std::future::Future<Output = redis::RedisResult<T>>,
) -> Result<T, String> {
    match tokio::time::timeout(t, fut).await {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(_) => Err(format!("Redis did not answer within {t:?}")),
    }
}
