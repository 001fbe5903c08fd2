//! What a spec's settings make of each client, the same on every engine:
//! its lock config (release, watchdog timeout, timer tick, retries) and
//! the bounds the checkers and the oracle allow for (the longest timer
//! tick and one-way delay).

use lockcore::Config;

use crate::model::fault::LinkRule;
use crate::model::history::Retries;
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
        .replicas(spec.redis.replicas)
        .jitter_seed(rng::client_jitter_seed(spec.seed, c as u32));
    if let Some(n) = cs.watchdog_batch_size {
        builder.watchdog_batch_size(n);
    }
    let tick = rng::client_timer_tick(spec.seed, c as u32, &builder.build().map_err(invalid)?);
    builder.timer_tick(tick).build().map_err(invalid)
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

/// [`crate::model::history::Meta::acquire_once_ms`] of `spec`'s clients.
pub(crate) fn acquire_once_ms(spec: &SimSpec) -> Option<u64> {
    let configs: Vec<Config> = (0..spec.clients.len())
        .filter_map(|c| client_config(spec, c).ok())
        .collect();
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
