//! Which master of a Redis Cluster a command goes to.
//!
//! A client in cluster mode (`useClusterServers()`) reads the slot table
//! at connect (`CLUSTER NODES`, in `Redisson.create()`, not sent here:
//! it starts as this split) and again at each topology scan (the
//! machine's `scan`, every `scanInterval`), and sends each keyed command
//! to the master entry that serves the slot Redisson computes for its
//! first key ([`crate::calc_slot`]).
//! Every key a lock touches hashes to the lock name's slot (its channel
//! and its queue carry the name in braces), so a lock's commands all go
//! to one [`Shard`]. locksim's clusters split the slots as `redis-cli
//! --cluster create` does ([`shard_of`]); a shard's primary failing over
//! keeps its index (Redisson's scan moves the entry's address, and the
//! driver routes a shard to whichever node is its primary).

use serde::{Deserialize, Serialize};

use crate::calc_slot;

/// How many slots a Redis Cluster has.
const SLOTS: u32 = 16_384;

/// A master entry of the client: 0 outside cluster mode; in a cluster of
/// `n` masters, `0..n` in slot order.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Shard(pub u16);

/// The shard of `shards` masters (0 or 1: not a cluster) that serves
/// `name`'s slot, the slots split as `redis-cli --cluster create` splits
/// them: `16384 / n` each, rounded, the last taking the rest.
pub fn shard_of(shards: u16, name: &str) -> Shard {
    if shards <= 1 {
        return Shard(0);
    }
    let slot = f64::from(calc_slot(name));
    let per = f64::from(SLOTS) / f64::from(shards);
    // Shard `i` ends at round(i * per + per - 1): the first whose end is
    // at or past the slot.
    let mut first_past = 0;
    while first_past + 1 < shards && (f64::from(first_past) * per + per - 1.0).round() < slot {
        first_past += 1;
    }
    Shard(first_past)
}

#[cfg(test)]
mod tests {
    use super::{Shard, shard_of};
    use crate::calc_slot;

    /// The split is fake-redis's (`Topology::even_split`, which its
    /// differential test holds to `redis-cli`'s) for every slot's names.
    #[test]
    fn shards_follow_redis_cli_s_split() {
        for masters in [2u16, 3, 5, 7] {
            let ranges = fake_redis::Topology::even_split(usize::from(masters));
            for i in 0..4_000 {
                let name = format!("lock-{i}");
                let slot = calc_slot(&name);
                let want = ranges.iter().position(|r| r.contains(&slot)).unwrap();
                assert_eq!(
                    shard_of(masters, &name),
                    Shard(want as u16),
                    "{name} {slot}"
                );
            }
        }
    }

    #[test]
    fn outside_a_cluster_every_name_is_shard_0() {
        assert_eq!(shard_of(0, "foo"), Shard(0));
        assert_eq!(shard_of(1, "foo"), Shard(0));
        // `foo` is slot 12182: the third of three masters (10923-16383).
        assert_eq!(shard_of(3, "foo"), Shard(2));
    }
}
