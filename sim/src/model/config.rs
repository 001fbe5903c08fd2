//! What a spec's settings make of each client, the same on every engine:
//! its lock config (release, watchdog timeout, timer tick, retries) and
//! the bounds the checkers and the oracle allow for (the longest timer
//! tick and one-way delay).

use lockcore::Config;

use crate::model::fault::LinkRule;
use crate::model::history::{ProbeBound, Retries};
use crate::model::rng;
use crate::{SimError, SimSpec};

/// Redisson's `pingConnectionInterval` (30 s by default): how late a
/// client learns of a closed connection whose close it never saw.
pub(crate) const PING_INTERVAL_MS: u64 = 30_000;

/// Client `c`'s lock config: its release and watchdog timeout, Redisson's
/// other defaults (its release's), its release's timer tick and the seed
/// of its jittered retry pauses (the same on every engine).
pub(crate) fn client_config(spec: &SimSpec, c: usize) -> Result<Config, SimError> {
    let cs = &spec.clients[c];
    let invalid =
        |e: lockcore::LockError| SimError::InvalidSpec(format!("client '{}': {e}", cs.name));
    let mut builder = Config::builder();
    builder
        .release(cs.profile.unwrap_or(spec.profile))
        .watchdog_timeout(cs.watchdog_timeout_ms.unwrap_or(spec.watchdog_timeout_ms))
        .replicas(seen_replicas(spec, cs))
        .cluster_proxy(spec.redis.proxy)
        .cluster_shards(spec.redis.shards)
        .cluster_nodes(
            (0..spec.redis.shards)
                .map(|i| crate::model::cluster::node_addr(i).to_string())
                .collect(),
        )
        .masters(spec.redis.masters, spec.redis.placement.clone())
        .jitter_seed(rng::client_jitter_seed(spec.seed, c as u32))
        .spin_seed(rng::client_spin_seed(spec.seed, c as u32));
    apply_settings(cs, &mut builder);
    let tick = rng::client_timer_tick(spec.seed, c as u32, &builder.build().map_err(invalid)?);
    builder.timer_tick(tick).build().map_err(invalid)
}

/// The replicas client `cs` is configured with (Redisson's
/// `availableSlaves`): none for `mode = "single"` (`useSingleServer()`,
/// whose `isSingleConfig()` sends every lock script without `WAIT`,
/// whatever the server behind its one address has: a managed endpoint
/// that follows the primary), and none on independent masters, each
/// reached so; otherwise the deployment's (in a cluster, each master's).
fn seen_replicas(spec: &SimSpec, cs: &crate::ClientSpec) -> u32 {
    if cs.mode == Some(lockcore::ServerMode::Single) || spec.redis.masters > 0 {
        0
    } else {
        spec.redis.replicas
    }
}

/// The client's overrides of Redisson's settings: where a spec leaves
/// one out, the release's default stands.
fn apply_settings(cs: &crate::ClientSpec, builder: &mut lockcore::ConfigBuilder) {
    if let Some(n) = cs.watchdog_batch_size {
        builder.watchdog_batch_size(n);
    }
    if let Some(ms) = cs.timeout_ms {
        builder.response_timeout(ms);
    }
    if let Some(n) = cs.retry_attempts {
        builder.retry_attempts(n);
    }
    if let Some(ms) = cs.retry_interval_ms {
        builder.retry_interval(ms);
    }
    if let Some(j) = cs.retry_jitter {
        builder.retry_delay(lockcore::RetryDelay::EqualJitter {
            base: lockcore::Millis(j.base_ms),
            max: lockcore::Millis(j.max_ms),
        });
    }
    if let Some(ms) = cs.slaves_sync_timeout_ms {
        builder.slaves_sync_timeout(ms);
    }
    if let Some(ms) = cs.scan_interval_ms {
        builder.scan_interval(ms);
    }
    if let Some(back_off) = cs.spin_back_off {
        builder.spin_back_off(back_off);
    }
    if let Some(mode) = cs.mode {
        builder.mode(mode);
    }
}

/// The timer tick of client `c` of `spec` in ms (0 for no such client or
/// an invalid config): how late its timers fire at most, on every engine.
pub fn client_timer_tick_ms(spec: &SimSpec, c: usize) -> u64 {
    if c >= spec.clients.len() {
        return 0;
    }
    client_config(spec, c).map_or(0, |config| config.timer_tick.0)
}

/// The longest command budget and the most retries of `spec`'s clients,
/// when they differ from Redisson 3.x's (see [`crate::model::history::Meta`]).
pub(crate) fn retries(spec: &SimSpec) -> Option<Retries> {
    let configs: Vec<Config> = (0..spec.clients.len())
        .filter_map(|c| client_config(spec, c).ok())
        .collect();
    most_retries(configs.iter())
}

/// [`retries`] of clients' configs already built (a run's own: building
/// them again cost a hundredth of an explored seed).
pub(crate) fn most_retries<'c>(
    configs: impl Iterator<Item = &'c Config> + Clone,
) -> Option<Retries> {
    let most = Retries {
        budget_ms: configs.clone().map(|c| c.command_budget().0).max()?,
        attempts: configs.map(|c| c.retry_attempts).max()?,
    };
    (most != Retries::redisson_3()).then_some(most)
}

/// The lockcore configs of `spec`'s clients that build.
fn client_configs(spec: &SimSpec) -> Vec<Config> {
    (0..spec.clients.len())
        .filter_map(|c| client_config(spec, c).ok())
        .collect()
}

/// [`crate::model::history::Meta::acquire_once_ms`] of `spec`'s clients.
pub(crate) fn acquire_once_ms(spec: &SimSpec) -> Option<u64> {
    let configs = client_configs(spec);
    acquire_once_of(configs.iter().map(|c| (c, true)), spec.latency.max_ms)
}

/// [`acquire_once_ms`] of clients' configs already built, each with
/// whether its client asked about `no-lock-resend` (only a timed-out
/// acquire or unlock does), over links whose own one-way latency is at
/// most `latency_ms`. A client that never asked had no acquire time out,
/// so no `tryLock` of its throws a timeout and it bounds nothing: left
/// out, the figure depends on the release only through the switches the
/// run asked about, as the run does (attribution reuses a run for every
/// release that agrees with it on those).
pub(crate) fn acquire_once_of<'c>(
    configs: impl Iterator<Item = (&'c Config, bool)>,
    latency_ms: u64,
) -> Option<u64> {
    let most = configs
        .filter(|&(_, asked)| asked)
        .try_fold(0, |most: u64, (c, _)| {
            let once = c.release.has(lockcore::Switch::NoLockResend) && c.replicas == 0;
            once.then(|| most.max(c.response_timeout.0))
        });
    // An `EVALSHA` answered `NOSCRIPT` and the `SCRIPT LOAD` come first
    // (two round trips), then the script's own send.
    most.filter(|&ms| ms > 0).map(|ms| ms + 5 * latency_ms)
}

/// [`crate::model::history::Meta::probe`] of `spec`'s clients.
pub(crate) fn probe(spec: &SimSpec) -> Option<ProbeBound> {
    let configs = client_configs(spec);
    probe_of(configs.iter().map(|c| (c, true)), spec.latency.max_ms)
}

/// [`probe`] of clients' configs already built, each with whether its
/// client asked about `wait-probe` or `jvm-wait-probe` (every synced send
/// before the answer does), as [`acquire_once_of`] counts only the
/// switches a run read, over links whose own one-way latency is at most
/// `latency_ms`.
pub(crate) fn probe_of<'c>(
    configs: impl Iterator<Item = (&'c Config, bool)>,
    latency_ms: u64,
) -> Option<ProbeBound> {
    let probes = |c: &Config| {
        c.release.has(lockcore::Switch::WaitProbe) || c.release.has(lockcore::Switch::JvmWaitProbe)
    };
    let budget_ms = configs
        .filter(|&(c, asked)| asked && c.replicas > 0 && probes(c))
        .map(|(c, _)| c.command_budget().0)
        .max()?;
    Some(ProbeBound {
        round_trip_ms: 2 * latency_ms + 5,
        budget_ms,
    })
}

/// [`crate::model::history::Meta::script_load_ms`] of `spec`'s clients.
pub(crate) fn script_load_ms(spec: &SimSpec) -> Vec<(String, u64)> {
    let configs: Vec<_> = (0..spec.clients.len())
        .map(|c| client_config(spec, c).ok())
        .collect();
    let built = spec
        .clients
        .iter()
        .zip(&configs)
        .filter_map(|(client, config)| config.as_ref().map(|config| (client, (config, true))));
    script_load_of(built)
}

/// [`script_load_ms`] of clients and their configs already built, each
/// with whether the client asked about `script-cache` (every script it
/// sent did), as [`acquire_once_of`] counts only the switches a run read.
pub(crate) fn script_load_of<'c>(
    clients: impl Iterator<Item = (&'c crate::ClientSpec, (&'c Config, bool))>,
) -> Vec<(String, u64)> {
    clients
        .filter(|(_, (c, asked))| {
            *asked && c.release.has(lockcore::Switch::ScriptCache) && c.replicas == 0
        })
        .map(|(client, (c, _))| {
            (
                client.name.clone(),
                2 * (c.response_timeout.0 + c.timer_tick.0),
            )
        })
        .collect()
}

/// The longest timer tick of `spec`'s clients: how late any client's
/// timer can fire, which the checkers' bounds allow for.
pub(crate) fn max_timer_tick_ms(spec: &SimSpec) -> u64 {
    (0..spec.clients.len())
        .map(|c| client_timer_tick_ms(spec, c))
        .max()
        .unwrap_or(0)
}

/// The longest one-way delay any message of `spec` can draw: the
/// checkers' bound, the same for every engine.
pub(crate) fn max_latency_ms(spec: &SimSpec) -> u64 {
    let latency = spec
        .faults
        .0
        .iter()
        .filter_map(|f| match f.kind().link() {
            LinkRule::Latency(range) => Some(range.max_ms),
            _ => None,
        })
        .fold(spec.latency.max_ms, u64::max);
    // A one-direction delay adds to the longest one-way delay the
    // checkers' bounds allow for.
    let delay = spec
        .faults
        .0
        .iter()
        .filter_map(|f| match f.kind().link() {
            LinkRule::Delay(_, ms) => Some(ms),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    latency.saturating_add(delay)
}

#[cfg(test)]
mod tests {
    use lockcore::{Millis, Release, RetryDelay};

    use super::client_config;
    use crate::run::tests::{client, critical, spec, thread};
    use crate::{RetryJitter, SimError, validate_spec};

    /// A client's settings reach its lock config; the rest stay the
    /// release's (3.48.0's four attempts and jittered pause among them).
    #[test]
    fn a_clients_settings_override_its_releases_defaults() {
        let mut s = spec(vec![client("A", vec![thread(0, critical(100))])]);
        s.profile = Release::version(lockcore::Version::new(3, 48, 0));
        let defaults = client_config(&s, 0).expect("valid");
        assert_eq!(defaults.retry_attempts, 4);
        assert_eq!(defaults.retry_delay, RetryDelay::REDISSON_3_48);
        let a = &mut s.clients[0];
        a.timeout_ms = Some(500);
        a.retry_attempts = Some(1);
        a.retry_interval_ms = Some(200);
        a.slaves_sync_timeout_ms = Some(50);
        a.scan_interval_ms = Some(2_500);
        let set = client_config(&s, 0).expect("valid");
        assert_eq!(set.scan_interval, Millis(2_500));
        assert_eq!(set.response_timeout, Millis(500));
        assert_eq!(set.retry_attempts, 1);
        assert_eq!(
            (set.retry_delay, set.retry_interval),
            (RetryDelay::Constant, Millis(200))
        );
        assert_eq!(set.slaves_sync_timeout, Millis(50));
        let a = &mut s.clients[0];
        a.retry_interval_ms = None;
        a.retry_jitter = Some(RetryJitter {
            base_ms: 10,
            max_ms: 40,
        });
        let jitter = RetryDelay::EqualJitter {
            base: Millis(10),
            max: Millis(40),
        };
        assert_eq!(client_config(&s, 0).expect("valid").retry_delay, jitter);
    }

    /// Settings out of range, or two retry pauses at once, are refused
    /// with the field's place.
    #[test]
    fn settings_out_of_range_are_refused_by_field() {
        let base = spec(vec![client("A", vec![thread(0, critical(100))])]);
        let refused = |edit: &dyn Fn(&mut crate::ClientSpec)| {
            let mut s = base.clone();
            edit(&mut s.clients[0]);
            match validate_spec(&s) {
                Err(SimError::Invalid { field, .. }) => field,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(
            refused(&|c| c.timeout_ms = Some(0)),
            "clients[0].timeout_ms"
        );
        assert_eq!(
            refused(&|c| c.slaves_sync_timeout_ms = Some(3_600_001)),
            "clients[0].slaves_sync_timeout_ms"
        );
        assert_eq!(
            refused(&|c| c.scan_interval_ms = Some(0)),
            "clients[0].scan_interval_ms"
        );
        assert_eq!(
            refused(&|c| c.retry_attempts = Some(u32::MAX)),
            "clients[0].retry_attempts"
        );
        let both = |c: &mut crate::ClientSpec| {
            c.retry_interval_ms = Some(100);
            c.retry_jitter = Some(RetryJitter {
                base_ms: 1,
                max_ms: 2,
            });
        };
        assert_eq!(refused(&both), "clients[0].retry_jitter");
    }
}
