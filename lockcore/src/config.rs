//! Client configuration, built with defaults that match Redisson's.

use serde::{Deserialize, Serialize};

use crate::{BackOff, Era, LockError, Millis, Placement, Release, RetryDelay, Switch};

/// A client's settings. Build one with [`Config::builder`].
///
/// # Timeouts and retries
///
/// Every command the client sends (acquire, renew, unlock, force-unlock,
/// queries, and the subscription to a lock's channel) gets a timer of
/// `response_timeout`. A reply that arrives after it is ignored. The command
/// is then sent again, as a new request, `retry_interval` after the timeout,
/// up to `retry_attempts` more times; when the last attempt times out too,
/// the command fails with [`TransportError::Timeout`](crate::TransportError::Timeout).
/// A connection error or a Redis error reply fails the command at once,
/// without retry, but for `TRYAGAIN` and `LOADING`, which are sent again
/// after the retry delay while attempts remain, and a cluster's `MOVED`
/// and `ASK`, which send it on to the node they name at once. So a command fails after at most
/// `(retry_attempts + 1) * response_timeout + retry_attempts * retry_interval`
/// ([`Config::command_budget`]). From Redisson 3.48.0
/// (`jittered-retry-delay`) the defaults are 4 attempts and a jittered
/// pause ([`RetryDelay`]), drawn from `jitter_seed`.
/// A retried script may run twice in Redis (the first copy was only slow):
/// the lock scripts tolerate that except for re-entrant acquires, which
/// count twice, exactly as in Redisson.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// Which Redisson release the client runs.
    pub release: Release,
    /// `lockWatchdogTimeout`: the lease set by the watchdog, renewed every
    /// third of it. Redisson's default is 30 000 ms.
    pub watchdog_timeout: Millis,
    /// Redisson's `timeout`: how long a command waits for its reply before
    /// it is retried (default 3 000 ms).
    pub response_timeout: Millis,
    /// Redisson's `retryAttempts`: how often a timed-out command is sent
    /// again before it fails (default 3).
    pub retry_attempts: u32,
    /// Redisson's `retryInterval`: the pause before a retry (default 1 500 ms).
    pub retry_interval: Millis,
    /// The tick of Redisson's timer: every timer fires at the end of the
    /// tick its deadline falls in, ticks falling on multiples of it on the
    /// client's clock. 0 (the default): timers fire exactly on time.
    /// [`timer_tick`](crate::timer_tick) gives a release's.
    #[serde(default)]
    pub timer_tick: Millis,
    /// The replicas Redis has, as the client sees them (Redisson's
    /// `availableSlaves`): 0, the default, is a single-server config, where
    /// no lock command waits for replicas. From 3.16.7 a client with
    /// replicas sends `WAIT` after each lock script (see
    /// [`Switch::LockWaitsForReplicas`](crate::Switch::LockWaitsForReplicas)).
    #[serde(default)]
    pub replicas: u32,
    /// `slavesSyncTimeout`: how long that `WAIT` waits (default 1 000 ms).
    #[serde(default = "default_slaves_sync_timeout")]
    pub slaves_sync_timeout: Millis,
    /// Redisson's `retryDelay` (3.48+): the pause before a resend;
    /// [`RetryDelay::Constant`] waits `retry_interval`.
    #[serde(default)]
    pub retry_delay: RetryDelay,
    /// Seeds the machine's draws of jittered delays (lockcore draws no
    /// other randomness; the simulator gives each client its own).
    #[serde(default)]
    pub jitter_seed: u64,
    /// `lockWatchdogBatchSize` (3.44+): how many locks one EVAL of the
    /// batched renewal round renews; a round sends its chunks one after
    /// the other (default 100).
    #[serde(default = "default_watchdog_batch_size")]
    pub watchdog_batch_size: u32,
    /// The back-off of the client's spin locks (`getSpinLock(name,
    /// backOff)`; Redisson's default, [`BackOff::Exponential`]).
    #[serde(default)]
    pub spin_back_off: BackOff,
    /// Seeds the exponential back-off's random part (a stream of its own,
    /// so a spin lock's sleeps never move the jittered retry pauses).
    #[serde(default)]
    pub spin_seed: u64,
    /// The fair lock's `threadWaitTime` (`Config.fairLockWaitTimeout`
    /// from 3.46.0): what a waiter adds to the deadline before it when
    /// its call gives no wait of its own. `None`, the default: the
    /// release's ([`fair_thread_wait`](crate::fair_thread_wait)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fair_lock_wait_timeout: Option<Millis>,
    /// How the client reaches Redis (Redisson's `useSingleServer()` or
    /// `useSentinelServers()`): [`ServerMode::Single`], the default, or
    /// through Sentinel, which changes what a restart of the primary does
    /// to the client's pub/sub connections (see
    /// [`Switch::PubSubClosedEntryDropped`](crate::Switch::PubSubClosedEntryDropped)).
    #[serde(default, skip_serializing_if = "ServerMode::is_single")]
    pub mode: ServerMode,
    /// Whether the server is a Redis Cluster behind a proxy on one address
    /// (Envoy, Twemproxy, a managed endpoint), as 4.0.0+'s probe at
    /// connect finds it: its two-key `MGET` (an `EVAL` from 4.3.1) is
    /// refused with `CROSSSLOT`. The probe runs in `Redisson.create()`,
    /// before the client's first command, and is not sent here; what it
    /// changes is [`Switch::RenewalBySlot`](crate::Switch::RenewalBySlot)'s
    /// grouping (every release computes slot 0 outside cluster mode).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cluster_proxy: bool,
    /// How many masters the Redis Cluster has that the client reaches in
    /// cluster mode (`useClusterServers()`); 0, the default, is no
    /// cluster. Each command goes to the master of its lock's slot
    /// ([`shard_of`](crate::shard_of)), and from 3.44.0 the watchdog
    /// renews slot by slot (`RenewalTask.renewSlots`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cluster_shards: u16,
    /// Where each master of the cluster listens (`host:port`, as `CLUSTER
    /// SLOTS` names them), in shard order: the node a `MOVED` or `ASK`
    /// names is the master at that address. Empty (the default), a
    /// redirect fails its command as one to an unknown node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_nodes: Vec<String>,
    /// Redisson's `scanInterval` (1 s): how often a cluster client reads
    /// the topology again, and so learns that a slot has moved.
    #[serde(
        default = "default_scan_interval",
        skip_serializing_if = "is_default_scan_interval"
    )]
    pub scan_interval: Millis,
    /// How many independent masters the client reaches, one Redisson
    /// instance each (the `RedissonClient`s a red lock is built over); 0,
    /// the default, is one server. Each lock is on the master `placement`
    /// names, reached as a single server; from 3.44.0 each instance's
    /// watchdog renews its own locks on a chain of its own.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub masters: u16,
    /// Which of the `masters` serves each lock (0 when not named).
    #[serde(default, skip_serializing_if = "Placement::is_empty")]
    pub placement: Placement,
    /// How many times faster than the scenario's time the client runs: 1
    /// in a simulation; the real-Redis engine runs `scale` times faster
    /// and divides every duration of the config by it. Redisson's fixed
    /// durations, which no setting holds (a multi-lock's 1.5 s per lock
    /// and its floors, the subscription timeout), are divided by it here
    /// ([`Config::fixed`]).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub time_scale: u64,
}

fn one() -> u64 {
    1
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

/// At most one master per slot.
const MAX_SHARDS: u32 = 16_384;

/// The most independent masters a client reaches.
pub const MAX_MASTERS: u16 = 16;

/// Independent masters are neither a cluster nor behind a proxy, and each
/// placed lock is on one of them, named without a brace (its keys are
/// found by the lock between their braces).
fn check_masters(c: &Config) -> Result<(), LockError> {
    let invalid = |m: String| Err(LockError::InvalidConfig(m));
    if c.masters == 0 {
        if let Some((name, _)) = c.placement.iter().next() {
            return invalid(format!("lock '{name}' is placed, but there are no masters"));
        }
        return Ok(());
    }
    if c.masters > MAX_MASTERS {
        return invalid(format!(
            "at most {MAX_MASTERS} independent masters, got {}",
            c.masters
        ));
    }
    if c.cluster_shards > 0 || c.cluster_proxy {
        return invalid("independent masters are not a cluster, nor behind a proxy".to_owned());
    }
    if c.mode != ServerMode::Single || c.replicas > 0 {
        return invalid(
            "each independent master is reached as a single server, without replicas".to_owned(),
        );
    }
    for (name, master) in c.placement.iter() {
        if master >= c.masters {
            return invalid(format!(
                "lock '{name}' is placed on master {master}, but there are {} (numbered from 0)",
                c.masters
            ));
        }
        if name.contains(['{', '}']) {
            return invalid(format!(
                "lock '{name}' has a brace: a lock on independent masters is named without"
            ));
        }
    }
    Ok(())
}

fn is_zero(n: &u16) -> bool {
    *n == 0
}

/// Redisson's connection manager: which `Config.use...()` the client was
/// built with. Only what locksim models differs between them; the
/// commands a lock sends are the same in both (`WAIT` still follows
/// [`Config::replicas`], not the mode).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ServerMode {
    /// `useSingleServer()`: a restart of Redis drops the connections, and
    /// `ConnectionWatchdog` reconnects each one and subscribes its channels
    /// again.
    #[default]
    Single,
    /// `useSentinelServers()`: the primary's `ClientConnectionsEntry` is
    /// marked down when it restarts (`nodeDown`), which closes its pub/sub
    /// connections for good and moves their channels to new ones
    /// (`PublishSubscribeService.reattachPubSub`).
    Sentinel,
}

impl ServerMode {
    /// Whether this is the single-server mode (left out when a config is
    /// written, so every config written before the mode existed reads and
    /// writes the same).
    pub fn is_single(&self) -> bool {
        *self == ServerMode::Single
    }

    /// The mode's name in scenario files (`single`, `sentinel`).
    pub fn name(self) -> &'static str {
        match self {
            ServerMode::Single => "single",
            ServerMode::Sentinel => "sentinel",
        }
    }
}

fn default_watchdog_batch_size() -> u32 {
    100
}

fn default_scan_interval() -> Millis {
    Millis(1_000)
}

fn is_default_scan_interval(ms: &Millis) -> bool {
    *ms == default_scan_interval()
}

fn default_slaves_sync_timeout() -> Millis {
    Millis(1_000)
}

impl Default for Config {
    fn default() -> Self {
        Config {
            release: Release::REDISSON,
            watchdog_timeout: Millis(30_000),
            response_timeout: Millis(3_000),
            retry_attempts: 3,
            retry_interval: Millis(1_500),
            timer_tick: Millis(0),
            replicas: 0,
            cluster_proxy: false,
            cluster_shards: 0,
            cluster_nodes: Vec::new(),
            scan_interval: default_scan_interval(),
            masters: 0,
            placement: Placement::default(),
            time_scale: 1,
            slaves_sync_timeout: default_slaves_sync_timeout(),
            retry_delay: RetryDelay::Constant,
            jitter_seed: 0,
            watchdog_batch_size: default_watchdog_batch_size(),
            spin_back_off: BackOff::Exponential,
            spin_seed: 0,
            fair_lock_wait_timeout: None,
            mode: ServerMode::Single,
        }
    }
}

impl Config {
    /// One of Redisson's fixed durations, `ms` of the scenario's time, in
    /// the client's time (see [`Config::time_scale`]).
    pub fn fixed(&self, ms: u64) -> Millis {
        Millis((ms / self.time_scale.max(1)).max(1))
    }

    /// A builder holding Redisson's defaults.
    pub fn builder() -> ConfigBuilder {
        ConfigBuilder {
            config: Config::default(),
            attempts_set: false,
            delay_set: false,
        }
    }

    /// The renewal period: a third of the watchdog timeout.
    pub fn renewal_interval(&self) -> Millis {
        Millis(self.watchdog_timeout.0 / 3)
    }

    /// The shortest and longest pause before retry `attempt` (from 0).
    pub fn retry_delay_range(&self, attempt: u32) -> (Millis, Millis) {
        self.retry_delay.range(attempt, self.retry_interval)
    }

    /// The longest one command may take before the client gives up on
    /// it: every attempt's response timeout plus the longest pauses
    /// between them (16.5 s with Redisson 3.x's defaults, 22 s with
    /// 3.48's).
    pub fn command_budget(&self) -> Millis {
        let attempts = self.retry_attempts;
        // The pause stops growing by retry 63 (`RetryDelay::range`), so
        // the sum is closed-form past it: a client may set a Java int's
        // worth of attempts (#7089's config had three million).
        let grown = attempts.min(64);
        let early: u64 = (0..grown).map(|n| self.retry_delay_range(n).1.0).sum();
        let late = u64::from(attempts - grown) * self.retry_delay_range(64).1.0;
        Millis((u64::from(attempts) + 1) * self.response_timeout.0 + early + late)
    }

    /// The shortest and longest TTL of a 3.24+ unlock latch whose `SET`
    /// succeeds (see [`Config::latch_ttl`]; a TTL Redis refuses leaves no
    /// latch and counts as 0). Wrapped arithmetic is not monotonic in the
    /// pause, so the two ends are ordered after the fact.
    pub fn latch_ttl_range(&self) -> (Millis, Millis) {
        let (lo, hi) = self.retry_delay_range(self.retry_attempts);
        let ttl = |d: Millis| Millis(self.latch_ttl(d).max(0).unsigned_abs());
        let (a, b) = (ttl(lo), ttl(hi));
        (a.min(b), a.max(b))
    }

    /// The unlock latch's TTL as the release computes it, with `pause`
    /// the retry delay drawn for `retryAttempts`: `(timeout + pause) ×
    /// retryAttempts` in Java arithmetic (`RedissonBaseLock.
    /// unlockInnerAsync`, read at the tags):
    /// - 3.24.0 to 3.47.x: `int` arithmetic, which wraps; from 3.24.3
    ///   (`latch-ttl-at-least-one`, #5392) raised to at least 1;
    /// - 3.48.0 to 4.3.x (`jittered-retry-delay`, commit e1154e3ec):
    ///   `long` arithmetic raised to at least 1, then passed on as
    ///   `(int) timeout`, which wraps: a large product becomes negative
    ///   or 0 and the script's `SET ... PX` fails (#7089);
    /// - from 4.4.0 (`latch-ttl-long`, #6939): `long` throughout, and an
    ///   overflowing product is capped at `Long.MAX_VALUE` (#7099).
    ///
    /// A `timeout` or pause beyond a Java int cannot be configured (the
    /// spec's bounds keep them under an hour), so the `as i32` of the
    /// operands below only truncates what Java's `int` fields hold too.
    pub fn latch_ttl(&self, pause: Millis) -> i64 {
        self.latch_ttl_with(pause, |s| self.release.has(s))
    }

    /// [`Config::latch_ttl`] with the release's switches asked through
    /// `has`: the machine asks its `SwitchReads`, so that explore's
    /// attribution knows the run read them.
    pub(crate) fn latch_ttl_with(&self, pause: Millis, has: impl Fn(Switch) -> bool) -> i64 {
        let timeout = i64::try_from(self.response_timeout.0).unwrap_or(i64::MAX);
        let pause = i64::try_from(pause.0).unwrap_or(i64::MAX);
        let attempts = i64::from(self.retry_attempts);
        if has(Switch::LatchTtlLong) {
            return timeout
                .checked_add(pause)
                .and_then(|sum| sum.checked_mul(attempts))
                .unwrap_or(i64::MAX)
                .max(1);
        }
        if has(Switch::JitteredRetryDelay) {
            let long = timeout.wrapping_add(pause).wrapping_mul(attempts).max(1);
            return i64::from(long as i32);
        }
        let int = (timeout as i32)
            .wrapping_add(pause as i32)
            .wrapping_mul(attempts as i32);
        i64::from(if has(Switch::LatchTtlAtLeastOne) {
            int.max(1)
        } else {
            int
        })
    }
}

/// The longest timer tick a config accepts (Redisson's is at most 100 ms).
const MAX_TICK_MS: u64 = 1_000;

/// Builds a [`Config`]; setters take and return `&mut Self`.
#[derive(Debug, Clone)]
pub struct ConfigBuilder {
    config: Config,
    /// Whether `retry_attempts` was set, else the release's default.
    attempts_set: bool,
    /// Whether the retry pause was set, else the release's default.
    delay_set: bool,
}

impl ConfigBuilder {
    /// Sets the release.
    pub fn release(&mut self, release: Release) -> &mut Self {
        self.config.release = release;
        self
    }

    /// Sets the release to an era alias.
    pub fn era(&mut self, era: Era) -> &mut Self {
        self.release(Release::from(era))
    }

    /// Sets `lockWatchdogTimeout` in ms.
    pub fn watchdog_timeout(&mut self, ms: u64) -> &mut Self {
        self.config.watchdog_timeout = Millis(ms);
        self
    }

    /// Sets the response timeout in ms.
    pub fn response_timeout(&mut self, ms: u64) -> &mut Self {
        self.config.response_timeout = Millis(ms);
        self
    }

    /// Sets how often a timed-out command is retried.
    pub fn retry_attempts(&mut self, attempts: u32) -> &mut Self {
        self.config.retry_attempts = attempts;
        self.attempts_set = true;
        self
    }

    /// Sets a constant pause before a retry, in ms (Redisson's
    /// `setRetryInterval`, which from 3.48 also sets a `ConstantDelay`).
    pub fn retry_interval(&mut self, ms: u64) -> &mut Self {
        self.config.retry_interval = Millis(ms);
        self.config.retry_delay = RetryDelay::Constant;
        self.delay_set = true;
        self
    }

    /// Sets the retry pause's strategy (Redisson's `setRetryDelay`).
    pub fn retry_delay(&mut self, delay: RetryDelay) -> &mut Self {
        self.config.retry_delay = delay;
        self.delay_set = true;
        self
    }

    /// Seeds the draws of jittered pauses.
    pub fn jitter_seed(&mut self, seed: u64) -> &mut Self {
        self.config.jitter_seed = seed;
        self
    }

    /// Sets the back-off of the client's spin locks.
    pub fn spin_back_off(&mut self, back_off: BackOff) -> &mut Self {
        self.config.spin_back_off = back_off;
        self
    }

    /// Seeds the random part of the spin locks' exponential back-off.
    pub fn spin_seed(&mut self, seed: u64) -> &mut Self {
        self.config.spin_seed = seed;
        self
    }

    /// Sets the timer's tick in ms (0: timers fire on time).
    pub fn timer_tick(&mut self, ms: u64) -> &mut Self {
        self.config.timer_tick = Millis(ms);
        self
    }

    /// Sets how many replicas the client sees (0: a single server).
    pub fn replicas(&mut self, n: u32) -> &mut Self {
        self.config.replicas = n;
        self
    }

    /// Sets whether the server is a Redis Cluster behind a proxy (what
    /// 4.0.0+'s connect-time probe reads).
    pub fn cluster_proxy(&mut self, on: bool) -> &mut Self {
        self.config.cluster_proxy = on;
        self
    }

    /// Sets how many masters the Redis Cluster has that the client reaches
    /// in cluster mode (0: none).
    pub fn cluster_shards(&mut self, n: u16) -> &mut Self {
        self.config.cluster_shards = n;
        self
    }

    /// Sets where each master of the cluster listens (`host:port`, in
    /// shard order), for the redirects that name them.
    pub fn cluster_nodes(&mut self, nodes: Vec<String>) -> &mut Self {
        self.config.cluster_nodes = nodes;
        self
    }

    /// Sets Redisson's `scanInterval` (ms).
    pub fn scan_interval(&mut self, ms: u64) -> &mut Self {
        self.config.scan_interval = Millis(ms);
        self
    }

    /// Sets the independent masters the client reaches (0: one server)
    /// and which serves each lock.
    pub fn masters(&mut self, n: u16, placement: Placement) -> &mut Self {
        self.config.masters = n;
        self.config.placement = placement;
        self
    }

    /// Sets how many times faster than the scenario's time the client
    /// runs (at least 1).
    pub fn time_scale(&mut self, scale: u64) -> &mut Self {
        self.config.time_scale = scale.max(1);
        self
    }

    /// Sets `slavesSyncTimeout` in ms.
    pub fn slaves_sync_timeout(&mut self, ms: u64) -> &mut Self {
        self.config.slaves_sync_timeout = Millis(ms);
        self
    }

    /// Sets the fair lock's `threadWaitTime` in ms (by default the
    /// release's).
    pub fn fair_lock_wait_timeout(&mut self, ms: u64) -> &mut Self {
        self.config.fair_lock_wait_timeout = Some(Millis(ms));
        self
    }

    /// Sets how the client reaches Redis (single server or Sentinel).
    pub fn mode(&mut self, mode: ServerMode) -> &mut Self {
        self.config.mode = mode;
        self
    }

    /// Sets `lockWatchdogBatchSize`: the locks per EVAL of a batched
    /// renewal round (at least 1).
    pub fn watchdog_batch_size(&mut self, n: u32) -> &mut Self {
        self.config.watchdog_batch_size = n;
        self
    }

    /// The configuration, or why its settings contradict each other.
    pub fn build(&self) -> Result<Config, LockError> {
        let mut c = self.config.clone();
        // Redisson 3.48.0's defaults (`jittered-retry-delay`), where the
        // settings were left alone.
        if c.release.has(Switch::JitteredRetryDelay) {
            if !self.attempts_set {
                c.retry_attempts = 4;
            }
            if !self.delay_set {
                c.retry_delay = RetryDelay::REDISSON_3_48;
            }
        }
        if c.watchdog_timeout.0 < 3 {
            return Err(LockError::InvalidConfig(format!(
                "watchdog timeout must be at least 3 ms so that a third of it is positive, got {} ms",
                c.watchdog_timeout.0
            )));
        }
        if c.response_timeout.0 == 0 {
            return Err(LockError::InvalidConfig(
                "response timeout must be positive".to_owned(),
            ));
        }
        if c.watchdog_batch_size == 0 {
            return Err(LockError::InvalidConfig(
                "watchdog batch size must be at least 1".to_owned(),
            ));
        }
        if c.timer_tick.0 > MAX_TICK_MS {
            return Err(LockError::InvalidConfig(format!(
                "timer tick must be at most {MAX_TICK_MS} ms, got {} ms",
                c.timer_tick.0
            )));
        }
        if u32::from(c.cluster_shards) > MAX_SHARDS {
            return Err(LockError::InvalidConfig(format!(
                "a cluster has at most {MAX_SHARDS} masters (one slot each), got {}",
                c.cluster_shards
            )));
        }
        check_masters(&c)?;
        if !c.cluster_nodes.is_empty() && c.cluster_nodes.len() != usize::from(c.cluster_shards) {
            return Err(LockError::InvalidConfig(format!(
                "a cluster of {} masters needs an address for each, got {}",
                c.cluster_shards,
                c.cluster_nodes.len()
            )));
        }
        if c.scan_interval.0 == 0 {
            return Err(LockError::InvalidConfig(
                "scan interval must be positive".to_owned(),
            ));
        }
        if c.cluster_shards > 0 && c.cluster_proxy {
            return Err(LockError::InvalidConfig(
                "a client reaches a cluster either in cluster mode or through a proxy, not both"
                    .to_owned(),
            ));
        }
        Ok(c)
    }
}
