//! Randomness: one seed, one independent stream per component.

use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A component that draws random numbers. Each gets its own ChaCha
/// stream of the run's seed, so adding a fault or a client never shifts
/// the draws of another component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    /// The uuids of client processes (one per start or restart).
    Uuids,
    /// Scenario generation ([`crate::generate`]).
    Swarm,
    /// The network link of one client (latencies).
    Link(u32),
    /// One fault of the plan (starvation delays, drop decisions).
    Fault(usize),
    /// The replication stream's lags.
    Replication,
    /// The every-kind swarm's draws for one fault kind (by its number).
    SwarmKind(u32),
    /// The every-kind swarm's draw of Redis's replicas.
    SwarmRedis,
    /// The random part of one client's first retry delay, which sets its
    /// timer's tick from Redisson 3.49 ([`client_timer_tick`]).
    TimerTick(u32),
    /// The generator's draw of a second lock ([`crate::generate_with`]).
    SwarmLocks,
    /// The generator's draw of a client on the async API.
    SwarmApi,
    /// The seed of one client's jittered retry pauses (Redisson 3.48+).
    RetryJitter(u32),
    /// The generator's draw of a thread that holds its lock re-entrantly.
    SwarmNesting,
    /// The generator's draw of a client whose threads hand over.
    SwarmRelay,
    /// The generator's draw of clients' Redisson settings.
    SwarmSettings,
    /// The portfolio's draw of a seed's arm ([`crate::Strategy::arm`]).
    Arm,
    /// The directed arm's draw of the rare point a seed aims at.
    Directed,
    /// The PCT arm's draw of its change points.
    Pct,
    /// The generator's draw of one lock type (by its name's number):
    /// whether a lock of the scenario is that Redisson object, and which
    /// of its objects each thread takes ([`crate::lock_types`]).
    SwarmLockType(u32),
    /// The seed of one client's spin-lock back-off draws (its
    /// `ExponentialBackOff`'s random part).
    SpinBackOff(u32),
    /// The seed of a branch's fork by its child number ([`crate::branch`]),
    /// drawn from the seed of the run it forks.
    Branch(u32),
    /// A branch's draws of its plan after its fork, from the fork's seed.
    BranchPlan,
    /// The generator's draw of which key of a drawn lock type each
    /// `delete-key` of its lock takes ([`crate::lock_types`]).
    SwarmDeleteKey,
    /// The generator's draw of the clients' connection mode (single
    /// server or Sentinel, [`crate::client_settings`]).
    SwarmMode,
    /// The generator's draw of Redis's own settings: its release line,
    /// AOF and replicas ([`crate::server_settings`]).
    SwarmServer,
    /// The generator's draw of a cluster proxy in front of Redis
    /// ([`crate::server_settings`]).
    SwarmProxy,
    /// The generator's draw of a managed endpoint in front of a Redis
    /// with replicas ([`crate::client_settings`]).
    SwarmEndpoint,
    /// The generator's draw of a thread on a multi-lock
    /// ([`crate::multi_locks`]).
    SwarmMulti,
    /// The generator's draw of a Redis Cluster for a plan that pauses one
    /// of its masters ([`crate::server_settings`]).
    SwarmCluster,
    /// The generator's draw of independent masters for a multi-lock's
    /// locks ([`crate::multi_locks`]).
    SwarmMasters,
    /// The replication lags of master `k` (from 1) of several; master 0
    /// draws from [`Stream::Replication`].
    ShardReplication(u16),
}

impl Stream {
    fn number(self) -> u64 {
        match self {
            Stream::Uuids => 1,
            Stream::Swarm => 2,
            Stream::Link(c) => (1 << 32) | u64::from(c),
            Stream::Fault(i) => (2 << 32) | i as u64,
            Stream::Replication => 3,
            Stream::SwarmKind(k) => (4 << 32) | u64::from(k),
            Stream::SwarmRedis => 5,
            Stream::TimerTick(c) => (5 << 32) | u64::from(c),
            Stream::SwarmLocks => 6,
            Stream::SwarmApi => 7,
            Stream::RetryJitter(c) => (6 << 32) | u64::from(c),
            Stream::SwarmNesting => 8,
            Stream::SwarmRelay => 9,
            Stream::SwarmSettings => 10,
            Stream::Arm => 11,
            Stream::Directed => 12,
            Stream::Pct => 13,
            Stream::SwarmLockType(t) => (7 << 32) | u64::from(t),
            Stream::SpinBackOff(c) => (8 << 32) | u64::from(c),
            Stream::Branch(child) => (9 << 32) | u64::from(child),
            Stream::BranchPlan => 14,
            Stream::SwarmDeleteKey => 15,
            Stream::SwarmMode => 16,
            Stream::SwarmServer => 17,
            Stream::SwarmProxy => 18,
            Stream::SwarmEndpoint => 19,
            Stream::SwarmMulti => 20,
            Stream::SwarmCluster => 21,
            Stream::SwarmMasters => 22,
            Stream::ShardReplication(k) => (10 << 32) | u64::from(k),
        }
    }
}

/// The generator of `stream` for a run seeded with `seed`. Inlined: a
/// generator is over 300 bytes, and built in the caller's place it is
/// not copied out of this function on the way (about 0.4% of an explored
/// seed).
#[inline(always)]
pub(crate) fn stream(seed: u64, stream: Stream) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream.number());
    rng
}

/// The timer tick of client `client` of a run seeded with `seed`, for
/// `config`'s release and settings (Redisson's rule, `lockcore::timer_tick`;
/// its jitter drawn from the client's own stream, so every engine gives a
/// client the same tick).
pub(crate) fn client_timer_tick(seed: u64, client: u32, config: &lockcore::Config) -> u64 {
    let jitter = stream(seed, Stream::TimerTick(client)).random_range(0..=500u64);
    lockcore::timer_tick(
        config.release,
        config.response_timeout,
        config.retry_interval,
        jitter,
    )
    .0
}

/// The seed of client `client`'s jittered retry pauses in a run seeded
/// with `seed` (lockcore draws them from it, the same on every engine).
pub(crate) fn client_jitter_seed(seed: u64, client: u32) -> u64 {
    stream(seed, Stream::RetryJitter(client)).next_u64()
}

/// The seed of client `client`'s spin-lock back-off in a run seeded with
/// `seed` (lockcore draws from it, the same on every engine).
pub(crate) fn client_spin_seed(seed: u64, client: u32) -> u64 {
    stream(seed, Stream::SpinBackOff(client)).next_u64()
}

/// A kind's stream number: its name's FNV-1a hash, so a kind's draws do
/// not depend on its place in the registration.
pub(crate) fn kind_number(name: &str) -> u32 {
    name.bytes().fold(0x811c_9dc5, |h: u32, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// A random UUID in the v4 text format (`xxxxxxxx-xxxx-4xxx-yxxx-...`).
pub(crate) fn uuid(rng: &mut impl Rng) -> String {
    let mut b: [u8; 16] = rng.random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(36);
    for (i, x) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            text.push('-');
        }
        text.push(char::from(HEX[usize::from(x >> 4)]));
        text.push(char::from(HEX[usize::from(x & 0x0f)]));
    }
    text
}

/// A draw in `min..=max` (in any unit); an empty range gives `min`.
pub(crate) fn between(rng: &mut impl Rng, min: u64, max: u64) -> u64 {
    if max <= min {
        min
    } else {
        rng.random_range(min..=max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Streams of one seed are independent and reproducible: the same
    /// (seed, stream) gives the same draws, another stream other draws.
    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: u64 = stream(7, Stream::Link(0)).random();
        let b: u64 = stream(7, Stream::Link(0)).random();
        let c: u64 = stream(7, Stream::Link(1)).random();
        let d: u64 = stream(8, Stream::Link(0)).random();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    /// No two streams share a number: two components drawing from one
    /// stream would move each other's draws (two branches once gave the
    /// spin back-off and a branch's fork the same `8 << 32` space).
    #[test]
    fn stream_numbers_are_distinct() {
        let mut all = vec![
            Stream::Uuids,
            Stream::Swarm,
            Stream::Replication,
            Stream::SwarmRedis,
            Stream::SwarmLocks,
            Stream::SwarmApi,
            Stream::SwarmNesting,
            Stream::SwarmRelay,
            Stream::SwarmSettings,
            Stream::Arm,
            Stream::Directed,
            Stream::Pct,
            Stream::BranchPlan,
            Stream::SwarmDeleteKey,
            Stream::SwarmMode,
            Stream::SwarmServer,
        ];
        for i in [0u32, 1, 2, 7, 15, 255] {
            all.extend([
                Stream::Link(i),
                Stream::Fault(i as usize),
                Stream::SwarmKind(i),
                Stream::TimerTick(i),
                Stream::RetryJitter(i),
                Stream::SwarmLockType(i),
                Stream::SpinBackOff(i),
                Stream::Branch(i),
                Stream::ShardReplication(i as u16),
            ]);
        }
        let numbers: std::collections::BTreeSet<u64> = all.iter().map(|s| s.number()).collect();
        assert_eq!(numbers.len(), all.len());
    }

    /// Uuids look like Redisson's (v4 text form), so timelines and hash
    /// fields read like the documents'.
    #[test]
    fn uuid_is_v4_text() {
        let u = uuid(&mut stream(1, Stream::Uuids));
        assert_eq!(u.len(), 36);
        let parts: Vec<_> = u.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4'));
        assert!(matches!(&parts[3][..1], "8" | "9" | "a" | "b"));
    }
}
