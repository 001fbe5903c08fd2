//! lockcore: the Redisson lock, written once.
//!
//! # Background
//!
//! Redisson's `RLock` is a re-entrant distributed lock on Redis. The lock is
//! a Redis hash: key = lock name, one field `<client-uuid>:<thread-id>` whose
//! value is the re-entrancy count. Acquire, renew and unlock are Lua scripts
//! run atomically by Redis; unlock publishes `0` on
//! `redisson_lock__channel:{<name>}` so waiting clients wake up. When a lock
//! is taken without a lease, the *watchdog* sets the key's expiry to
//! `lockWatchdogTimeout` (default 30 s) and renews it every third of that
//! for as long as the lock is held, so a crashed client frees the lock
//! after at most the timeout while a live one keeps it. How the watchdog
//! reacts to a failed renewal changed between Redisson versions, and that
//! is what locksim studies.
//!
//! # The sans-IO model
//!
//! [`LockClient`] is the whole algorithm for one client (one uuid, any
//! number of threads and locks) as a state machine, in the style of
//! quinn-proto. Inputs, each with the driver's `now` in [`Millis`]:
//!
//! - [`LockClient::call`]: a thread calls an [`RLock`] method ([`Call`]);
//!   [`LockClient::call_multi`]: a `RedissonMultiLock` or
//!   `RedissonRedLock` method ([`MultiLock`]), made of its locks' calls;
//! - [`LockClient::on_reply`]: a command's reply, or a [`TransportError`];
//! - [`LockClient::on_timer`]: a timer the machine asked for fired;
//! - [`LockClient::on_message`]: a pub/sub message arrived;
//! - [`LockClient::interrupt`]: `Thread.interrupt()` of a thread whose
//!   acquire is in flight (its script still runs on Redis; the late reply
//!   does what the release's callback does).
//!
//! Outputs, drained with [`LockClient::poll`] ([`Output`]): commands to send
//! (with their [`Purpose`]), subscriptions, timers to set or cancel, call
//! results ([`CallOutcome`] or [`LockError`]) and [`Event`]s for observers.
//! The machine reads no clock, spawns nothing, draws no randomness and keeps
//! its state in ordered maps, so the same inputs give the same outputs, byte
//! for byte: the simulator drives it directly under virtual time, and the
//! async wrapper drives the very same code against a real Redis.
//!
//! Response timeouts and retries live in the machine too (see [`Config`]):
//! a driver only delivers replies and fires timers. Each
//! [`Output::Send`] says which `attempt` it is (0 first, then 1, 2, ... for
//! resends after a timeout), so an observer can tell a resend from a new
//! command.
//!
//! # Releases
//!
//! A [`Release`] says which Redisson the client is: a version from 2.0.0
//! to 4.7.0 (`3.23.4`), or an era alias ([`Era`]): `redisson-legacy`
//! (3.8.0, docs 001/003; the entry is removed and re-registered on every
//! renewal, with a renewal-after-unlock race), `redisson` (3.23.4, docs
//! 002/004, the default; an error stops renewal for good),
//! `redisson-batched` (3.44.0; one chain per client that survives errors)
//! and `fenced` (4.7.0 plus locksim's fencing tokens, [`Event::LeaseLost`],
//! renewal retried until the lease would really end). A release resolves
//! once to a [`SwitchSet`]: each [`Switch`] is one change of Redisson's
//! history with its version and upstream issue, so a known defect is the
//! behaviour of the releases before its switch. Switches can be toggled
//! for a what-if.
//!
//! # Features
//!
//! The sans-IO core (the machine, releases, [`Value`], the script texts)
//! depends on no runtime and no server: `--no-default-features` builds it
//! with bytes, rand_chacha (the seeded jitter of 3.48+'s retry pauses),
//! serde, thiserror, tracing and uuid alone. The default feature `async`
//! adds the async wrapper and the RESP transport, on tokio. lockcore
//! depends on nothing of fake-redis or the simulator: the reply type and
//! the scripts belong to the client; fake-redis keeps its own copy of the
//! texts it recognises, and a test checks they agree. The in-process
//! transport over fake-redis's engine lives in `sim` (`sim::InProcessServer`).
//!
//! # Transports
//!
//! The async wrapper [`RedissonClient`] (with [`RLock`] handles) runs a
//! [`LockClient`] on tokio over any [`Transport`]: the simulator's
//! in-process transport (fake-redis's engine in the same process, for
//! tests) or [`RespTransport`] (RESP2 over TCP to a real Redis). Every
//! command names its master ([`Shard`]); a client in cluster mode
//! ([`ConfigBuilder::cluster_shards`]) runs over a [`ClusterTransport`] of
//! one transport per master, and a one-node transport refuses any shard
//! but 0 ([`TransportError::NoShard`]). A cluster node's `MOVED` and
//! `ASK` send a command on to the master they name
//! ([`ConfigBuilder::cluster_nodes`]), as Redisson's `RedisExecutor`
//! does. A locksim client and
//! a Java Redisson client can share a lock: the key layout, script texts
//! and error texts are Redisson's.
//!
//! # Layout
//!
//! - `id`: ids and times ([`ThreadId`], [`LockName`], [`Millis`], ...).
//! - `vec_map`: [`VecMap`], a few entries by key in a sorted vector
//!   (requests, timers, calls).
//! - `release`: [`Release`], [`Era`], [`Version`], [`Switch`] (one file
//!   per switch under `release/switch/`).
//! - `config`: [`Config`] and [`ConfigBuilder`] (Redisson's defaults).
//! - `retry_delay`: [`RetryDelay`], the pause before a resend.
//! - `back_off`: [`BackOff`], a spin lock's sleeps between attempts.
//! - `kind`: [`LockKind`], which Redisson lock object a call is on
//!   (`RLock`, the read and the write lock of `RReadWriteLock`), one file
//!   per kind with its scripts.
//! - `script_rw`: the exact texts of `RReadWriteLock`'s scripts.
//! - `script_fair`: the exact texts of `RFairLock`'s scripts.
//! - `script_fair_legacy`: `RFairLock`'s scripts before 3.32.0, by era.
//! - `script_fenced`: the exact texts of `RFencedLock`'s scripts.
//! - `script_spin`: the exact texts of `RSpinLock`'s scripts.
//! - `call`: [`Call`] and [`CallOutcome`].
//! - `multi_lock`: [`MultiLock`] and [`MultiKind`], Redisson's
//!   `RedissonMultiLock` and `RedissonRedLock` (their algorithm is the
//!   machine's `multi`).
//! - `error`: [`LockError`] and [`TransportError`].
//! - `machine`: [`LockClient`] and its [`Output`]s, split by concept:
//!   `request` (timeouts, retries), `command` (wire form of each script),
//!   `acquire` (lock / tryLock), `subscription` (channel and latch),
//!   `spin` (a spin lock's sleeps), `unlock`, `query`, `multi` (the
//!   multi-lock's loop over its locks), `caller` (a call's key: a thread
//!   on a lock), `watchdog`
//!   (`redisson`), `legacy`, `batched`,
//!   `fence` (`fenced`), `sync` (the `WAIT` after a lock script),
//!   `probe` (what the server supports), `redirect` (a cluster's
//!   `MOVED`, `ASK` and `TRYAGAIN`), `scan` (a cluster client's
//!   topology scan, `CLUSTER NODES`), `replica_count` (the `INFO`
//!   that gives the `WAIT`'s count), `sometimes` (the places it notes
//!   passing, [`Sometimes`], for coverage), `slot_table` (the order in
//!   which a cluster client's round walks its slots), `slots_apart`
//!   (`slots-renewed-apart`: a renewal chain per slot).
//! - `shard`: [`Shard`], the master of a Redis Cluster a command goes
//!   to ([`shard_of`]), beside `slot` ([`calc_slot`]).
//! - `placement`: [`Placement`], which of several independent masters
//!   (the instances a red lock is built over) serves each lock, and
//!   [`route`], a command's master in any deployment.
//! - `value`: [`Value`], a reply as the lock reads it.
//! - `script`: the exact texts of the scripts the lock sends.
//! - `transport`: the [`Transport`] trait.
//! - `client`: the async wrapper [`RedissonClient`] and [`RLock`];
//!   `client/freeze`: its stop-the-world pause (`freeze`, `thaw`);
//!   `client/multi`: [`RMultiLock`].
//! - `local_time`: [`LocalTime`], the client's wall clock and timer
//!   oscillator as the wrapper reads them.
//! - `resp`: [`RespTransport`].
//! - `cluster`: [`ClusterTransport`], a transport per master of a Redis
//!   Cluster, each command routed by its [`Shard`].

mod back_off;
mod call;
#[cfg(feature = "async")]
mod client;
#[cfg(feature = "async")]
mod cluster;
mod config;
mod error;
mod id;
mod kind;
#[cfg(feature = "async")]
mod local_time;
mod machine;
mod multi_lock;
mod placement;
mod release;
#[cfg(feature = "async")]
mod resp;
mod retry_delay;
mod script;
mod script_fair;
mod script_fair_legacy;
mod script_fenced;
mod script_rw;
mod script_spin;
mod shard;
mod slot;
mod transport;
mod value;
mod vec_map;

pub use back_off::BackOff;
pub use call::{Call, CallOutcome};
#[cfg(feature = "async")]
pub use client::{Lag, Lagged, RLock, RMultiLock, RedissonClient, Trace, Tracer};
#[cfg(feature = "async")]
pub use cluster::ClusterTransport;
pub use config::{Config, ConfigBuilder, MAX_MASTERS, ServerMode};
pub use error::{LockError, TransportError};
pub use id::{FencingToken, LockName, Millis, RequestId, StepId, ThreadId, TimerId};
pub use kind::{KindInfo, LockKind, fair_thread_wait};
#[cfg(feature = "async")]
pub use local_time::LocalTime;
pub use machine::{Command, Event, LockClient, Output, Purpose, Reached, Sometimes};
pub use multi_lock::{MultiKind, MultiLock};
pub use placement::{Placement, route};
pub use release::{
    Era, MAX_TIMER_TICK, NOT_REPORTED, Release, ReleaseError, Switch, SwitchInfo, SwitchSet,
    TIMER_TICK_SWITCHES, Version, timer_tick,
};
#[cfg(feature = "async")]
pub use resp::{Connect, RespTransport, TcpConnect, reconnect_delay};
pub use retry_delay::RetryDelay;
pub use shard::{Shard, shard_of};
pub use slot::calc_slot;
pub use transport::{Incoming, Message, Transport, parse_message, single_node};
pub use value::{Value, lossy_text};
pub use vec_map::VecMap;
