//! Redisson settings for generated clients (issue 52): with some chance
//! per seed, the default workload's clients get a `timeout`, retries, a
//! retry pause and a `slavesSyncTimeout` of their own, drawn from a
//! stream of their own so that every other draw of every seed, and every
//! seed that draws none, stays as it was.

use rand::RngExt;

use crate::model::rng::{self, Stream};
use crate::model::validate::MAX_RETRY_ATTEMPTS;
use crate::{RetryJitter, SimSpec};

/// The chance that a scenario of the default kinds ([`crate::SwarmKinds::Swarm`])
/// gives its clients Redisson settings of their own instead of the
/// release's defaults.
pub const SETTINGS_CHANCE: f64 = 0.25;

/// The chance that a client given settings has a Java int's worth of
/// `retryAttempts` (from a million: #7089's config had three million),
/// which wraps the unlock latch's TTL in 3.24.0 to 4.3.x.
pub const HUGE_RETRIES_CHANCE: f64 = 0.125;

/// With [`SETTINGS_CHANCE`], drawn from a stream of its own so that every
/// other draw of the seed stays as it was, each client gets settings
/// drawn around Redisson's ranges: `timeout` 500 to 5 000 ms,
/// `retryAttempts` 0 to 6 (or, with [`HUGE_RETRIES_CHANCE`], from a
/// million up), a constant `retryInterval` of 0 to 3 000 ms or an
/// `EqualJitterDelay`, and `slavesSyncTimeout` 100 to 3 000 ms. The
/// scripts stay as drawn: settings change how the client talks to Redis,
/// never how the script uses the lock.
pub(crate) fn draw_settings(spec: &mut SimSpec) {
    let mut r = rng::stream(spec.seed, Stream::SwarmSettings);
    if !r.random_bool(SETTINGS_CHANCE) {
        return;
    }
    for c in &mut spec.clients {
        c.timeout_ms = Some(r.random_range(500..=5_000));
        c.retry_attempts = Some(if r.random_bool(HUGE_RETRIES_CHANCE) {
            r.random_range(1_000_000..=MAX_RETRY_ATTEMPTS)
        } else {
            r.random_range(0..=6)
        });
        if r.random_bool(0.5) {
            c.retry_interval_ms = Some(r.random_range(0..=3_000));
        } else {
            let base_ms = r.random_range(100..=1_500);
            let max_ms = r.random_range(base_ms..=3_000);
            c.retry_jitter = Some(RetryJitter { base_ms, max_ms });
        }
        c.slaves_sync_timeout_ms = Some(r.random_range(100..=3_000));
    }
}

/// The chance that a scenario of the default kinds reaches Redis through
/// Sentinel (every client in [`lockcore::ServerMode::Sentinel`]).
pub const SENTINEL_CHANCE: f64 = 0.25;

/// With [`SENTINEL_CHANCE`], drawn from a stream of its own so that every
/// other draw of the seed stays as it was, every client reaches Redis
/// through Sentinel: a `redis-restart` (or any close of its connections)
/// is then a restart of the primary, which before 3.46.0 stops a client's
/// pub/sub for good when it had a subscription in use (#6026). From
/// 3.46.0 the mode changes nothing locksim models, so a seed that draws it
/// runs as before.
pub(crate) fn draw_mode(spec: &mut SimSpec) {
    let mut r = rng::stream(spec.seed, Stream::SwarmMode);
    // A cluster's clients are in cluster mode; independent masters' are
    // single servers.
    if !r.random_bool(SENTINEL_CHANCE) || spec.redis.has_masters() {
        return;
    }
    for c in &mut spec.clients {
        c.mode = Some(lockcore::ServerMode::Sentinel);
    }
}

/// On a Redis with replicas whose clients were not drawn to Sentinel,
/// with [`ENDPOINT_CHANCE`], drawn from a stream of its own, every client
/// reaches it in single-server mode through one address that follows the
/// primary (a managed endpoint): it sends no `WAIT`, whatever the server
/// has (`isSingleConfig()`), so a failover can lose a lock it answered.
pub(crate) fn draw_endpoint(spec: &mut SimSpec) {
    let mut r = rng::stream(spec.seed, Stream::SwarmEndpoint);
    let drawn = r.random_bool(ENDPOINT_CHANCE);
    // A cluster's clients are in cluster mode; independent masters' are
    // single servers already.
    let moded = spec.clients.iter().any(|c| c.mode.is_some());
    if !drawn || spec.redis.replicas == 0 || moded || spec.redis.has_masters() {
        return;
    }
    for c in &mut spec.clients {
        c.mode = Some(lockcore::ServerMode::Single);
    }
}

/// The chance that a scenario of the default kinds on a Redis with
/// replicas, not drawn to Sentinel, reaches it through a managed
/// endpoint in single-server mode.
pub const ENDPOINT_CHANCE: f64 = 0.25;

#[cfg(test)]
mod tests {
    use crate::{Workload, generate_with, validate_spec};

    /// About a quarter of the default workload's seeds give their clients
    /// settings, some of them a #7089-sized `retryAttempts`; every spec
    /// stays valid; the classic workload (the regression corpus's) and
    /// `--kinds all` never draw them.
    #[test]
    fn a_quarter_of_default_seeds_draw_valid_settings() {
        let (mut drawn, mut huge) = (0, 0);
        for seed in 0..400 {
            let spec = generate_with(seed, None, Workload::default());
            validate_spec(&spec).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            if spec.clients.iter().any(|c| c.timeout_ms.is_some()) {
                drawn += 1;
            }
            huge += spec
                .clients
                .iter()
                .filter(|c| c.retry_attempts.is_some_and(|n| n >= 1_000_000))
                .count();
            for other in Workload::UNSET {
                let other = generate_with(seed, None, other);
                assert!(other.clients.iter().all(|c| c.timeout_ms.is_none()));
            }
        }
        assert!(
            (70..130).contains(&drawn),
            "{drawn} of 400 seeds drew settings"
        );
        assert!(huge > 5, "{huge} clients with a huge retryAttempts");
    }

    /// About a quarter of the default workload's replicated seeds not
    /// drawn to Sentinel reach Redis through a managed endpoint, every
    /// client of such a seed does, and none without replicas does.
    #[test]
    fn a_quarter_of_replicated_seeds_reach_redis_through_an_endpoint() {
        let single = |c: &crate::ClientSpec| c.mode == Some(lockcore::ServerMode::Single);
        let (mut replicated, mut drawn) = (0, 0);
        for seed in 0..2_000 {
            let spec = generate_with(seed, None, Workload::default());
            let sentinel = spec
                .clients
                .iter()
                .any(|c| c.mode == Some(lockcore::ServerMode::Sentinel));
            if spec.clients.iter().any(single) {
                assert!(spec.clients.iter().all(single), "seed {seed}");
                assert!(spec.redis.replicas > 0, "seed {seed}");
                drawn += 1;
            }
            replicated += usize::from(spec.redis.replicas > 0 && !sentinel);
        }
        assert!(
            (replicated * 15 / 100..replicated * 35 / 100).contains(&drawn),
            "{drawn} of {replicated} replicated seeds drew an endpoint"
        );
    }

    /// About a quarter of the default workload's seeds reach Redis through
    /// Sentinel, every client of such a seed does, and the classic workload
    /// and `--kinds all` never do (their seeds' specs stay as they were).
    #[test]
    fn a_quarter_of_default_seeds_reach_redis_through_sentinel() {
        let sentinel = |c: &crate::ClientSpec| c.mode == Some(lockcore::ServerMode::Sentinel);
        let mut drawn = 0;
        for seed in 0..400 {
            let spec = generate_with(seed, None, Workload::default());
            if spec.clients.iter().any(sentinel) {
                assert!(spec.clients.iter().all(sentinel), "seed {seed}");
                drawn += 1;
            }
            for other in Workload::UNSET {
                let other = generate_with(seed, None, other);
                assert!(other.clients.iter().all(|c| c.mode.is_none()));
            }
        }
        assert!(
            (70..130).contains(&drawn),
            "{drawn} of 400 seeds drew Sentinel"
        );
    }
}
