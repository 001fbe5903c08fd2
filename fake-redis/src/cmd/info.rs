//! `INFO`: the sections client libraries parse.
//!
//! ioredis waits for `loading:0` (persistence) before it is ready, others
//! read `redis_version`, `role` and the keyspace lines. Fields are Redis
//! 7.0.15's names in its order; values the engine cannot know (process id,
//! memory) are plausible constants or its own counts.

use bytes::Bytes;

use super::Ctx;
use crate::Value;
use crate::error::CmdError;

const SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "keyspace",
];

fn section(ctx: &mut Ctx<'_>, name: &str) -> String {
    let now = ctx.now;
    let body: Vec<String> = match name {
        "server" => vec![
            format!("redis_version:{}", ctx.state.version.full()),
            "redis_mode:standalone".into(),
            "os:fake-redis".into(),
            "arch_bits:64".into(),
            "process_id:1".into(),
            "tcp_port:6379".into(),
            format!("server_time_usec:{}", now.saturating_mul(1000)),
            format!(
                "uptime_in_seconds:{}",
                (now - ctx.state.started_ms).max(0) / 1000
            ),
            format!(
                "uptime_in_days:{}",
                (now - ctx.state.started_ms).max(0) / 86_400_000
            ),
            "hz:10".into(),
        ],
        "clients" => vec![
            format!("connected_clients:{}", ctx.state.clients.len()),
            "cluster_connections:0".into(),
            "maxclients:10000".into(),
            format!("blocked_clients:{}", ctx.state.blocked_order.len()),
        ],
        "memory" => vec![
            "used_memory:0".into(),
            "maxmemory:0".into(),
            "maxmemory_policy:noeviction".into(),
        ],
        "persistence" => vec![
            "loading:0".into(),
            "async_loading:0".into(),
            "rdb_changes_since_last_save:0".into(),
            "rdb_bgsave_in_progress:0".into(),
            format!("aof_enabled:{}", u8::from(ctx.state.config.appendonly())),
            "aof_rewrite_in_progress:0".into(),
        ],
        "stats" => vec![
            format!("total_connections_received:{}", ctx.state.stats.connections),
            format!("total_commands_processed:{}", ctx.state.stats.commands),
            format!(
                "pubsub_channels:{}",
                ctx.state.pubsub.active_channels().count()
            ),
            format!("pubsub_patterns:{}", ctx.state.pubsub.numpat()),
        ],
        "replication" => ctx.state.replication.info(),
        _ => (0..crate::engine::DATABASES)
            .filter_map(|i| {
                let db = ctx.db_at(i);
                let keys = db.len(now);
                (keys > 0)
                    .then(|| format!("db{i}:keys={keys},expires={},avg_ttl=0", db.expires(now)))
            })
            .collect(),
    };
    let mut title = name.to_owned();
    title[..1].make_ascii_uppercase();
    let mut out = format!("# {title}\r\n");
    for line in body {
        out.push_str(&line);
        out.push_str("\r\n");
    }
    out
}

/// # Format
/// `INFO [section ...]`: the named sections (`default`, `all` and
/// `everything` give all of them); an unknown section gives nothing.
pub(crate) fn info(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let wanted: Vec<String> = args[1..]
        .iter()
        .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase())
        .collect();
    let all = wanted.is_empty()
        || wanted
            .iter()
            .any(|w| matches!(w.as_str(), "default" | "all" | "everything"));
    let parts: Vec<String> = SECTIONS
        .iter()
        .filter(|s| all || wanted.iter().any(|w| w == *s))
        .map(|s| section(ctx, s))
        .collect();
    Ok(Value::bulk(parts.join("\r\n")))
}
