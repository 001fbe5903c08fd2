//! A Redisson client's settings and deployment as locksim applies them
//! to a spec: the user's Redisson config where it sets them, Redisson's
//! defaults for the release where it does not. `locksim audit` runs every
//! explored run with them, and the envelope its probes.

use serde::Serialize;
use sim::{ClientSpec, RetryJitter, SimSpec};

/// What the audit models of a Redisson config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Settings {
    /// `lockWatchdogTimeout`, in ms.
    pub watchdog_timeout_ms: u64,
    /// `lockWatchdogBatchSize`, where set (3.44+).
    pub watchdog_batch_size: Option<u32>,
    /// `timeout`, in ms, where set.
    pub timeout_ms: Option<u64>,
    /// `retryAttempts`, where set.
    pub retry_attempts: Option<u32>,
    /// A constant pause before a resend (`retryInterval`), where set.
    pub retry_interval_ms: Option<u64>,
    /// A jittered pause before a resend (4.x's `EqualJitterDelay`), where set.
    pub retry_jitter: Option<RetryJitter>,
    /// `slavesSyncTimeout`, in ms, where set.
    pub slaves_sync_timeout_ms: Option<u64>,
    /// A cluster's `scanInterval`, in ms, where set.
    pub scan_interval_ms: Option<u64>,
    /// Whether the client is configured with replicas (any mode but a
    /// single server): Redisson then follows each lock script with a
    /// `WAIT` (3.16.7+), and a replica can be promoted.
    pub replicated: bool,
    /// Whether the client reaches Redis through Sentinel
    /// (`sentinelServersConfig`): every client then runs in
    /// [`lockcore::ServerMode::Sentinel`] (#6026's pub/sub after a restart
    /// of the primary); otherwise in the single-server mode.
    pub sentinel: bool,
    /// Whether the client reaches a Redis Cluster through a proxy on one
    /// address (`[sim.redis] proxy`). A config cannot say so: `locksim
    /// audit --behind-proxy` does. Otherwise the audit's deployment is no
    /// cluster, and a proxy drawn by explore's generator is taken off.
    pub proxy: bool,
    /// Whether the single server's one address fronts a primary with
    /// replicas that fails over behind it (a managed endpoint: Azure Cache
    /// for Redis, ElastiCache's primary endpoint; `locksim audit
    /// --replicated-endpoint`). A config cannot say so. Redisson's
    /// single-server mode sends no `WAIT` (`isSingleConfig()`), so the
    /// clients run as `mode = "single"` on a Redis with replicas, and the
    /// faults that act on replicas stay.
    pub replicated_endpoint: bool,
    /// Whether the client reaches a Redis Cluster in cluster mode
    /// (`clusterServersConfig`): the run's Redis is a cluster of the
    /// masters explore drew, or of three, without replicas (a
    /// cluster's are not modelled yet), so the faults on replicas are
    /// left out.
    pub cluster: bool,
}

/// The masters of an audited cluster whose run explore did not make one.
pub(crate) const AUDIT_SHARDS: u16 = 3;

impl Default for Settings {
    /// Redisson's defaults on a single server.
    fn default() -> Self {
        Settings {
            watchdog_timeout_ms: 30_000,
            watchdog_batch_size: None,
            timeout_ms: None,
            retry_attempts: None,
            retry_interval_ms: None,
            retry_jitter: None,
            slaves_sync_timeout_ms: None,
            scan_interval_ms: None,
            replicated: false,
            sentinel: false,
            proxy: false,
            replicated_endpoint: false,
            cluster: false,
        }
    }
}

impl Settings {
    /// `spec` as the user's clients and deployment would run it: every
    /// client with these settings. On a single server (where Redisson
    /// sends no `WAIT`, whatever the server has) Redis has no replicas,
    /// and the faults that act on replicas (a failover, a switchover, a
    /// replication stall: every kind that needs one) and the replicas' AOF
    /// are left out; configured with replicas, or on a replicated
    /// endpoint, Redis has at least one; a cluster has at least one per
    /// master, and keeps only the replica faults that name a master
    /// (`shard-failover`).
    pub fn apply(&self, spec: &mut SimSpec) {
        spec.watchdog_timeout_ms = self.watchdog_timeout_ms;
        spec.redis.proxy =
            self.proxy && !self.replicated && !self.replicated_endpoint && !self.cluster;
        // The user's config is one deployment: a multi-lock explore put on
        // independent masters runs on it.
        spec.redis.masters = 0;
        spec.redis.placement = Default::default();
        spec.redis.shards = match (self.cluster, spec.redis.shards) {
            (false, _) => 0,
            (true, 0) => AUDIT_SHARDS,
            (true, drawn) => drawn,
        };
        if !self.cluster {
            spec.faults
                .0
                .retain(|f| f.shard().is_none() && f.slot_move().is_none());
        }
        for c in &mut spec.clients {
            self.apply_client(c);
        }
        if self.cluster {
            // Each master with a replica of its own, as `redis-cli
            // --cluster-replicas 1` and every managed cluster give it: the
            // lock scripts wait for it, and a `shard-failover` promotes it.
            // The faults on one primary's replicas have no primary here.
            spec.redis.replicas = spec.redis.replicas.max(1);
            spec.faults
                .0
                .retain(|f| f.shard().is_some() || !sim::verbs(f).iter().any(|v| v.on_replicas()));
        } else if self.replicated || self.replicated_endpoint {
            spec.redis.replicas = spec.redis.replicas.max(1);
        } else {
            spec.redis.replicas = 0;
            spec.redis.replica_appendonly = false;
            spec.faults
                .0
                .retain(|f| !sim::verbs(f).iter().any(|v| v.on_replicas()));
        }
    }

    /// One client with these settings.
    pub fn apply_client(&self, c: &mut ClientSpec) {
        c.watchdog_timeout_ms = None;
        c.watchdog_batch_size = self.watchdog_batch_size;
        c.timeout_ms = self.timeout_ms;
        c.retry_attempts = self.retry_attempts;
        c.retry_interval_ms = self.retry_interval_ms;
        c.retry_jitter = self.retry_jitter;
        c.slaves_sync_timeout_ms = self.slaves_sync_timeout_ms;
        c.scan_interval_ms = self.scan_interval_ms;
        c.mode = if self.sentinel {
            Some(lockcore::ServerMode::Sentinel)
        } else if self.replicated_endpoint && !self.replicated {
            Some(lockcore::ServerMode::Single)
        } else {
            None
        };
    }
}
