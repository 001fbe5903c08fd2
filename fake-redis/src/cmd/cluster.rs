//! `CLUSTER` (`INFO`, `KEYSLOT`, `MYID`, `NODES`, `SHARDS`, `SLOTS`,
//! `SETSLOT`),
//! `ASKING`, `READONLY` and `READWRITE`: Redis 7.0's `clusterCommand` and
//! friends (`src/cluster.c` at 7.0.15), with its texts. A server that is
//! no cluster node answers them as Redis without `cluster-enabled`.

use bytes::Bytes;

use super::Ctx;
use crate::Value;
use crate::error::{CmdError, printable};
use crate::routing::ClusterRole;
use crate::slot::{SLOTS, key_slot};
use crate::topology::{self, Topology};

const DISABLED: &str = "ERR This instance has cluster support disabled";

fn role<'c>(ctx: &'c mut Ctx<'_>) -> Result<&'c mut ClusterRole, CmdError> {
    ctx.state
        .cluster
        .as_mut()
        .ok_or_else(|| CmdError::other(DISABLED))
}

/// # Format
/// `CLUSTER INFO | KEYSLOT key | MYID | NODES | SHARDS | SLOTS | SETSLOT slot
/// (IMPORTING id | MIGRATING id | STABLE | NODE id)`
pub(super) fn cluster(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let now = ctx.now;
    let my_offset = i64::try_from(ctx.state.replication.offset).unwrap_or(i64::MAX);
    let sub = args[1].to_ascii_lowercase();
    if sub.as_slice() == b"setslot" {
        return setslot(ctx, args);
    }
    let role = role(ctx)?;
    let t = topology::lock(&role.topology);
    Ok(match sub.as_slice() {
        b"keyslot" => Value::Int(i64::from(key_slot(&args[2]))),
        b"myid" => bulk(t.node(role.me).map_or("", |n| n.id.as_str())),
        b"info" => bulk(&info(&t, role.me)),
        b"nodes" => bulk(&nodes(&t, role, now)),
        b"slots" => slots(&t),
        b"shards" => shards(&t, role.me, my_offset),
        _ => return Err(CmdError::other(DISABLED)),
    })
}

fn bulk(s: &str) -> Value {
    Value::Bulk(Bytes::copy_from_slice(s.as_bytes()))
}

/// `CLUSTER INFO`: the state and slot counts (no node fails here), the
/// epochs, and no bus messages (there is no bus).
fn info(t: &Topology, me: usize) -> String {
    let assigned = t.slots_assigned();
    let state = if assigned == usize::from(SLOTS) {
        "ok"
    } else {
        "fail"
    };
    let size = t
        .nodes()
        .iter()
        .enumerate()
        .filter(|(i, n)| n.master.is_none() && t.ranges().iter().any(|r| r.2 == *i))
        .count();
    let current = t.nodes().iter().map(|n| n.epoch).max().unwrap_or(0);
    let mine = t.node(me).map_or(0, |n| n.epoch);
    format!(
        "cluster_state:{state}\r\ncluster_slots_assigned:{assigned}\r\ncluster_slots_ok:{assigned}\r\n\
         cluster_slots_pfail:0\r\ncluster_slots_fail:0\r\ncluster_known_nodes:{}\r\n\
         cluster_size:{size}\r\ncluster_current_epoch:{current}\r\ncluster_my_epoch:{mine}\r\n\
         cluster_stats_messages_sent:0\r\ncluster_stats_messages_received:0\r\n\
         total_cluster_links_buffer_limit_exceeded:0\r\n",
        t.nodes().len()
    )
}

/// `CLUSTER NODES`: a line per node, `clusterGenNodeDescription`'s
/// `<id> <ip:port@cport> <flags> <master> <ping-sent> <pong-recv>
/// <config-epoch> <link-state> <slot> ...`, this node's migrations as
/// `[slot->-id]` and `[slot-<-id]`. A peer's last pong is now.
fn nodes(t: &Topology, role: &ClusterRole, now: i64) -> String {
    use std::fmt::Write;
    let ranges = t.ranges();
    let mut out = String::with_capacity(128 * t.nodes().len());
    for (i, n) in t.nodes().iter().enumerate() {
        let myself = if i == role.me { "myself," } else { "" };
        let kind = if n.master.is_some() {
            "slave"
        } else {
            "master"
        };
        let master = n
            .master
            .and_then(|m| t.node(m))
            .map_or("-", |m| m.id.as_str());
        let epoch = n
            .master
            .and_then(|m| t.node(m))
            .map_or(n.epoch, |m| m.epoch);
        let pong = if i == role.me { 0 } else { now };
        // Writing to a String cannot fail.
        out.push_str(n.head());
        let _ = write!(out, " {myself}{kind} {master} 0 {pong} {epoch} connected");
        for &(first, last, _) in ranges.iter().filter(|r| r.2 == i) {
            let _ = match first == last {
                true => write!(out, " {first}"),
                false => write!(out, " {first}-{last}"),
            };
        }
        if i == role.me {
            let id = |n: usize| t.node(n).map_or("", |n| n.id.as_str());
            let mut moves: Vec<(u16, String)> = Vec::new();
            moves.extend(
                role.migrating
                    .iter()
                    .map(|(&s, &n)| (s, format!(" [{s}->-{}]", id(n)))),
            );
            for (&s, &n) in &role.importing {
                if !role.migrating.contains_key(&s) {
                    moves.push((s, format!(" [{s}-<-{}]", id(n))));
                }
            }
            moves.sort();
            for (_, m) in moves {
                out.push_str(&m);
            }
        }
        out.push('\n');
    }
    out
}

/// `CLUSTER SLOTS`: per run of slots, its first and last slot, then its
/// master and its replicas as `[ip, port, id, {}]`.
fn slots(t: &Topology) -> Value {
    let node_entry = |i: usize| {
        t.node(i).map(|n| {
            Value::Array(vec![
                bulk(&n.addr.ip().to_string()),
                Value::Int(i64::from(n.addr.port())),
                bulk(&n.id),
                Value::Map(Vec::new()),
            ])
        })
    };
    let runs = t.ranges().into_iter().map(|(first, last, owner)| {
        let mut entry = vec![Value::Int(i64::from(first)), Value::Int(i64::from(last))];
        entry.extend(node_entry(owner));
        entry.extend(t.replicas_of(owner).filter_map(node_entry));
        Value::Array(entry)
    });
    Value::Array(runs.collect())
}

/// `CLUSTER SHARDS`: per master (node order), its slot ranges as a
/// flat list of first and last slots, and its nodes (master first) with
/// `id`, `port`, `ip`, `endpoint`, `role`, `replication-offset` and
/// `health`. A peer's offset is 0 (Redis learns it by gossip).
fn shards(t: &Topology, me: usize, my_offset: i64) -> Value {
    let ranges = t.ranges();
    let node_map = |i: usize| {
        let n = t.node(i)?;
        let offset = if i == me { my_offset } else { 0 };
        let health = if n.master.is_some() && offset == 0 {
            "loading"
        } else {
            "online"
        };
        let ip = n.addr.ip().to_string();
        Some(Value::Map(vec![
            (bulk("id"), bulk(&n.id)),
            (bulk("port"), Value::Int(i64::from(n.addr.port()))),
            (bulk("ip"), bulk(&ip)),
            (bulk("endpoint"), bulk(&ip)),
            (
                bulk("role"),
                bulk(if n.master.is_some() {
                    "replica"
                } else {
                    "master"
                }),
            ),
            (bulk("replication-offset"), Value::Int(offset)),
            (bulk("health"), bulk(health)),
        ]))
    };
    let masters = (0..t.nodes().len()).filter(|&i| t.nodes()[i].master.is_none());
    let shards = masters.map(|m| {
        let slots = ranges
            .iter()
            .filter(|r| r.2 == m)
            .flat_map(|r| [Value::Int(i64::from(r.0)), Value::Int(i64::from(r.1))])
            .collect();
        let nodes = std::iter::once(m)
            .chain(t.replicas_of(m))
            .filter_map(node_map);
        Value::Map(vec![
            (bulk("slots"), Value::Array(slots)),
            (bulk("nodes"), Value::Array(nodes.collect())),
        ])
    });
    Value::Array(shards.collect())
}

/// `CLUSTER SETSLOT`: a slot's migration state on this node, or its new
/// owner (`NODE`), which every node of the cluster sees at once.
fn setslot(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let now = ctx.now;
    let keys_in_slot = |ctx: &mut Ctx<'_>, slot: u16| {
        ctx.db_at(0)
            .live_entries(now)
            .filter(|(k, _)| key_slot(k) == slot)
            .count()
    };
    let role = role(ctx)?;
    let t = topology::lock(&role.topology);
    let me = role.me;
    if t.node(me).is_some_and(|n| n.master.is_some()) {
        return Err(CmdError::other("ERR Please use SETSLOT only with masters."));
    }
    let slot = crate::number::parse_i64(&args[2])
        .and_then(|s| u16::try_from(s).ok())
        .filter(|&s| s < SLOTS)
        .ok_or_else(|| CmdError::other("ERR Invalid or out of range slot"))?;
    let action = args[3].to_ascii_lowercase();
    let target = || -> Result<usize, CmdError> {
        let unknown =
            |prefix: &str| CmdError::other(format!("ERR {prefix} {}", printable(&args[4])));
        let n = t.find(&args[4]).ok_or_else(|| {
            if action.as_slice() == b"node" {
                unknown("Unknown node")
            } else {
                unknown("I don't know about node")
            }
        })?;
        if t.node(n).is_some_and(|n| n.master.is_some()) {
            return Err(CmdError::other("ERR Target node is not a master"));
        }
        Ok(n)
    };
    match (action.as_slice(), args.len()) {
        (b"migrating", 5) => {
            if t.owner(slot) != Some(me) {
                return Err(CmdError::other(format!(
                    "ERR I'm not the owner of hash slot {slot}"
                )));
            }
            let n = target()?;
            drop(t);
            role.migrating.insert(slot, n);
        }
        (b"importing", 5) => {
            if t.owner(slot) == Some(me) {
                return Err(CmdError::other(format!(
                    "ERR I'm already the owner of hash slot {slot}"
                )));
            }
            let n = target()?;
            drop(t);
            role.importing.insert(slot, n);
        }
        (b"stable", 4) => {
            drop(t);
            role.migrating.remove(&slot);
            role.importing.remove(&slot);
        }
        (b"node", 5) => {
            let n = target()?;
            let was_mine = t.owner(slot) == Some(me);
            drop(t);
            return setslot_node(ctx, slot, n, was_mine, keys_in_slot);
        }
        _ => {
            return Err(CmdError::other(
                "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP",
            ));
        }
    }
    Ok(Value::ok())
}

/// `CLUSTER SETSLOT <slot> NODE <id>`: refused while this node still
/// holds keys of a slot it gives away; ends this node's migration or
/// import of it; the importer takes a new config epoch.
fn setslot_node(
    ctx: &mut Ctx<'_>,
    slot: u16,
    node: usize,
    was_mine: bool,
    keys_in_slot: impl Fn(&mut Ctx<'_>, u16) -> usize,
) -> Result<Value, CmdError> {
    let keys = keys_in_slot(ctx, slot);
    let role = role(ctx)?;
    if was_mine && node != role.me && keys != 0 {
        return Err(CmdError::other(format!(
            "ERR Can't assign hashslot {slot} to a different node while I still hold keys for this hash slot."
        )));
    }
    if keys == 0 {
        role.migrating.remove(&slot);
    }
    let mut t = topology::lock(&role.topology);
    t.assign(slot..=slot, node);
    if node == role.me && role.importing.remove(&slot).is_some() {
        t.bump_epoch(node);
    }
    Ok(Value::ok())
}

/// `ASKING`: the next command may use a slot this node is importing.
pub(super) fn asking(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> Result<Value, CmdError> {
    role(ctx)?;
    ctx.state.client(ctx.conn).asking = true;
    Ok(Value::ok())
}

/// `READONLY`: a replica serves this client reads of its master's slots.
pub(super) fn readonly(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> Result<Value, CmdError> {
    role(ctx)?;
    ctx.state.client(ctx.conn).readonly = true;
    Ok(Value::ok())
}

/// `READWRITE`: ends `READONLY`.
pub(super) fn readwrite(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> Result<Value, CmdError> {
    role(ctx)?;
    ctx.state.client(ctx.conn).readonly = false;
    Ok(Value::ok())
}
