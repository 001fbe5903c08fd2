//! What to simulate: clients, their threads' scripts, settings and faults.

use lockcore::{LockName, Release};
use serde::{Deserialize, Serialize};

use crate::model::reseed::Reseed;
use crate::{FaultPlan, Step};

/// The default lock name, as in the documents' experiments.
pub const DEFAULT_LOCK: &str = "redisson:lock";

/// A whole run: the input of [`crate::run`]. Serde data, so a run can be
/// printed, saved and replayed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimSpec {
    /// Every random choice of the run derives from this seed.
    pub seed: u64,
    /// The profile of clients that name none.
    #[serde(default)]
    #[schemars(with = "String")]
    pub profile: Release,
    /// `lockWatchdogTimeout` in ms for clients that name none.
    #[serde(default = "default_watchdog_ms")]
    #[schemars(range(min = 3, max = crate::MAX_LEASE_MS))]
    pub watchdog_timeout_ms: u64,
    /// One-way network latency between a client and Redis, drawn per message.
    #[serde(default)]
    pub latency: LatencyRange,
    /// The client processes.
    #[schemars(length(min = 1, max = crate::MAX_CLIENTS))]
    pub clients: Vec<ClientSpec>,
    /// The faults, at fixed virtual times.
    #[serde(default)]
    pub faults: FaultPlan,
    /// Virtual time at which the run stops, in ms. A watchdog that is never
    /// stopped renews for ever, so every run has an end.
    #[serde(default = "default_horizon_ms")]
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub horizon_ms: u64,
    /// Redis's deployment: a primary alone (the default) or with replicas.
    #[serde(default, skip_serializing_if = "RedisSpec::is_default")]
    pub redis: RedisSpec,
    /// Instants from which the in-run draws come from other streams, in
    /// order (a branch of an explored run: `locksim replay SEED --branch
    /// PATH`); none for every other run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reseeds: Vec<Reseed>,
}

/// Redis's deployment (`[sim.redis]`): the primary the clients talk to and
/// its replicas, which receive its writes asynchronously, each write
/// after a lag drawn from `replication_lag`. A `failover` promotes one.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedisSpec {
    /// How many replicas the primary has.
    #[serde(default)]
    #[schemars(range(max = crate::model::validate::MAX_REPLICAS))]
    pub replicas: u32,
    /// How long a write takes to reach a replica, in ms (drawn per write
    /// and replica; writes arrive in order).
    #[serde(default)]
    pub replication_lag: LatencyRange,
    /// The Redis release line every node answers as: `"6.2"`, `"7.0"`
    /// (the default, the installed `redis-server`) or `"7.2"` (the first
    /// with `WAITAOF`). It changes the unknown-command text Redisson
    /// 3.46+ parses and whether `WAITAOF` exists.
    #[serde(
        default,
        with = "crate::model::server::version",
        skip_serializing_if = "crate::model::server::is_default_version"
    )]
    #[schemars(with = "String")]
    pub version: fake_redis::RedisVersion,
    /// Whether the primary writes an AOF (`appendonly yes`): `INFO` says
    /// `aof_enabled:1`, and Redisson 3.46.0-3.52.x then send `WAITAOF`
    /// after lock scripts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub appendonly: bool,
    /// Whether the replicas write an AOF: `WAITAOF` counts only those.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replica_appendonly: bool,
    /// Whether the clients reach a Redis Cluster through a proxy on one
    /// address (Envoy, Twemproxy, a managed cloud endpoint): a command or
    /// script whose keys hash to different slots is refused with
    /// `CROSSSLOT`, and Redisson 4.0.0+'s probe at connect reads it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub proxy: bool,
    /// A Redis Cluster of this many masters, the slots split as
    /// `redis-cli --cluster create` splits them, which every client
    /// reaches in cluster mode (`useClusterServers()`): each lock's
    /// commands go to the master of its slot. 0, the default: no cluster.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(range(max = crate::model::cluster::MAX_SHARDS))]
    pub shards: u16,
    /// Independent masters, each a Redis of its own that shares nothing
    /// with the others (the servers a red lock is built over), which every
    /// client reaches as one Redisson instance each, in single-server
    /// mode. 0, the default: one Redis.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(range(max = lockcore::MAX_MASTERS))]
    pub masters: u16,
    /// Which of the independent masters serves each lock, by name
    /// (`placement = { b = 1, c = 2 }`); a lock not named is on master 0.
    #[serde(default, skip_serializing_if = "lockcore::Placement::is_empty")]
    #[schemars(with = "std::collections::BTreeMap<String, u16>")]
    pub placement: lockcore::Placement,
}

fn is_zero(n: &u16) -> bool {
    *n == 0
}

impl RedisSpec {
    /// A primary alone, with the default lag: left out when a spec is
    /// written.
    pub fn is_default(&self) -> bool {
        *self == RedisSpec::default()
    }

    /// How many masters: a cluster's, the independent ones, or 1.
    pub fn master_count(&self) -> u16 {
        self.shards.max(self.masters).max(1)
    }

    /// Whether there are several masters (a cluster or independent ones).
    pub fn has_masters(&self) -> bool {
        self.shards > 0 || self.masters > 0
    }

    /// The master that serves `name` (a lock's key or channel): in a
    /// cluster, its slot's; on independent masters, the placed one; else 0.
    pub fn route(&self, name: &str) -> u16 {
        lockcore::route(self.shards, &self.placement, name).0
    }
}

fn default_watchdog_ms() -> u64 {
    30_000
}

fn default_horizon_ms() -> u64 {
    120_000
}

/// A range of one-way latencies in ms, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LatencyRange {
    /// The shortest latency.
    #[schemars(range(max = crate::MAX_DELAY_MS))]
    pub min_ms: u64,
    /// The longest latency.
    #[schemars(range(max = crate::MAX_DELAY_MS))]
    pub max_ms: u64,
}

impl Default for LatencyRange {
    fn default() -> Self {
        LatencyRange {
            min_ms: 1,
            max_ms: 5,
        }
    }
}

/// One client process: one lockcore client (one uuid) and its threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientSpec {
    /// A short name used in timelines and faults (`A`, `B`).
    #[schemars(pattern(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$"))]
    pub name: String,
    /// Overrides the run's profile.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub profile: Option<Release>,
    /// Overrides the run's `lockWatchdogTimeout`, in ms.
    #[serde(default)]
    #[schemars(range(min = 3, max = crate::MAX_LEASE_MS))]
    pub watchdog_timeout_ms: Option<u64>,
    /// Overrides `lockWatchdogBatchSize` (3.44+: the locks one EVAL of
    /// the batched renewal round renews; Redisson's default, 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watchdog_batch_size: Option<u32>,
    /// Overrides Redisson's `timeout`, in ms: how long a command waits for
    /// its reply before it is sent again (Redisson's default, 3 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = crate::MAX_DELAY_MS))]
    pub timeout_ms: Option<u64>,
    /// Overrides `retryAttempts`: how often a timed-out command is sent
    /// again (Redisson's default, 3; 4 from 3.48.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = crate::model::validate::MAX_RETRY_ATTEMPTS))]
    pub retry_attempts: Option<u32>,
    /// Overrides the pause before a resend with a constant one, in ms
    /// (`retryInterval`, or 4.x's `ConstantDelay`; Redisson's default to
    /// 3.47, 1 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = crate::MAX_DELAY_MS))]
    pub retry_interval_ms: Option<u64>,
    /// Overrides the pause before a resend with a jittered one (3.48+'s
    /// `EqualJitterDelay`; its default, 1 000 to 2 000 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_jitter: Option<RetryJitter>,
    /// Overrides `slavesSyncTimeout`, in ms: how long the `WAIT` after a
    /// lock script waits for replicas (Redisson's default, 1 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = crate::MAX_DELAY_MS))]
    pub slaves_sync_timeout_ms: Option<u64>,
    /// Overrides `scanInterval`, in ms: how often a cluster client reads
    /// `CLUSTER NODES` and so learns that a slot has moved (Redisson's
    /// default, 1 000). Only a cluster client scans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = crate::MAX_DELAY_MS))]
    pub scan_interval_ms: Option<u64>,
    /// The back-off of the client's spin locks (`getSpinLock(name,
    /// backOff)`): `exponential` (Redisson's default: 1 ms doubling to
    /// 128 ms, plus a random part) or `constant` (64 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<SpinBackOffName>")]
    pub spin_back_off: Option<lockcore::BackOff>,
    /// How the client reaches Redis. Left out: as the deployment, a
    /// single server without replicas, and with replicas a client
    /// configured with them (`useMasterSlaveServers()`,
    /// `useReplicatedServers()`), whose lock scripts wait for them
    /// (`WAIT`, 3.16.7+). `single`: `useSingleServer()`, which sends no
    /// `WAIT` whatever the server has (`isSingleConfig()`): with replicas,
    /// one address that follows the primary through a failover, as a
    /// managed endpoint does (Azure Cache for Redis, ElastiCache's primary
    /// endpoint). `sentinel`: `useSentinelServers()`, the same Redis
    /// behind Sentinel: a `redis-restart` is then a restart of the
    /// primary, which before Redisson 3.46.0 stops the client's pub/sub
    /// for good when it had a subscription in use (#6026).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ServerModeName>")]
    pub mode: Option<lockcore::ServerMode>,
    /// The threads, each running its own script.
    #[schemars(length(min = 1, max = crate::MAX_THREADS))]
    pub threads: Vec<ThreadSpec>,
}

/// The schema's words for [`ClientSpec::spin_back_off`].
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[allow(dead_code)]
enum SpinBackOffName {
    /// `ExponentialBackOff`.
    Exponential,
    /// `ConstantBackOff`.
    Constant,
}

/// The schema's words for [`ClientSpec::mode`].
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[allow(dead_code)]
enum ServerModeName {
    /// `useSingleServer()`.
    Single,
    /// `useSentinelServers()`.
    Sentinel,
}

/// One thread: when it starts and the steps it runs in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadSpec {
    /// When the thread starts, in ms.
    #[serde(default)]
    pub start_ms: u64,
    /// The lock its lock steps use.
    #[serde(default = "default_lock")]
    #[schemars(with = "String", length(min = 1))]
    pub lock: LockName,
    /// Its script.
    #[schemars(length(min = 1, max = crate::MAX_STEPS))]
    pub steps: Vec<Step>,
    /// A multi-lock its lock steps call instead of `lock`
    /// (`RedissonMultiLock` or `RedissonRedLock` over these locks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multi: Option<crate::model::multi::MultiSpec>,
}

impl ThreadSpec {
    /// The multi-lock its lock steps call, if it has one.
    pub fn multi_lock(&self) -> Option<lockcore::MultiLock> {
        self.multi.as_ref().and_then(|m| m.multi_lock())
    }

    /// The lock object its lock steps are on: `lock` as the kind its
    /// acquire steps name (`read-lock`: the read lock of `lock`), an
    /// `RLock` when they name none. Validation refuses a thread whose
    /// acquires name two.
    pub fn object(&self) -> LockName {
        if let Some(first) = self.multi.as_ref().and_then(|m| m.locks.first()) {
            return first.clone();
        }
        let mut kinds = Vec::new();
        crate::model::step::objects(&self.steps, &mut kinds);
        match kinds.first() {
            Some(&kind) => self.lock.with_kind(kind),
            None => self.lock.clone(),
        }
    }
}

fn default_lock() -> LockName {
    LockName::new(DEFAULT_LOCK).expect("the default lock name is not empty")
}

impl ClientSpec {
    /// A client named `name` running `threads`, with the run's release and
    /// watchdog timeout and Redisson's defaults for every other setting.
    pub fn new(name: impl Into<String>, threads: Vec<ThreadSpec>) -> ClientSpec {
        ClientSpec {
            name: name.into(),
            profile: None,
            watchdog_timeout_ms: None,
            watchdog_batch_size: None,
            timeout_ms: None,
            retry_attempts: None,
            retry_interval_ms: None,
            retry_jitter: None,
            slaves_sync_timeout_ms: None,
            scan_interval_ms: None,
            spin_back_off: None,
            mode: None,
            threads,
        }
    }
}

/// Redisson's `EqualJitterDelay(base, max)`: before resend `n` (from 0)
/// the pause is half of `min(base × 2^n, max)` plus a random part of up
/// to the other half.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryJitter {
    /// The first resend's delay before the jitter halves it, in ms.
    #[schemars(range(min = 1, max = crate::MAX_DELAY_MS))]
    pub base_ms: u64,
    /// The cap of its growth, in ms.
    #[schemars(range(min = 1, max = crate::MAX_DELAY_MS))]
    pub max_ms: u64,
}
