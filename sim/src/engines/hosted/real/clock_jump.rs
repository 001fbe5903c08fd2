//! `clock-jump` on a real Redis, whose clock is not ours to move: a
//! script moves the remaining TTLs of the locks' keys instead.

use bytes::Bytes;

use super::cluster::{Routed, To, master_of, masters};
use super::words;
use crate::SimSpec;

/// Moves every key of the spec's locks and every unlock latch `ms` ahead
/// in time (negative: back), as a jump of Redis's clock would: each one's
/// remaining TTL shrinks by `ms` (one that would be past its expiry is
/// left 1 ms, so Redis expires it, and the shadow records an expiry, not a
/// deletion). A real Redis's clock is not ours to move, but a lock only
/// ever sets relative expiries (`PEXPIRE`, `SET PX`), so what a jump
/// changes is exactly the remaining TTL of the keys alive at it.
///
/// The locks come as arguments after the jump, not as declared keys: a
/// cluster's master refuses a command whose keys span slots
/// (`CROSSSLOT`), while a script without a shebang may touch any key of
/// its own node (Redis 7's compatibility mode), and `KEYS` lists that
/// node's latches alone.
const CLOCK_JUMP: &str = "local jump = tonumber(ARGV[1]) \
    local keys = redis.call('keys', 'redisson_unlock_latch:*') \
    for i = 2, #ARGV do table.insert(keys, ARGV[i]) end \
    for _, k in ipairs(keys) do \
      local ttl = redis.call('pttl', k) \
      if ttl > 0 then \
        local left = ttl - jump \
        if left < 1 then left = 1 end \
        redis.call('pexpire', k, left) \
      end \
    end \
    return #keys";

/// The `EVAL`s of [`CLOCK_JUMP`] for `spec`'s locks: one per master, over
/// the locks it serves (one, over every lock, with one Redis).
pub(super) fn clock_jumps(spec: &SimSpec, ms: i64) -> Vec<Routed> {
    let locks: std::collections::BTreeSet<&str> = spec
        .clients
        .iter()
        .flat_map(|c| c.threads.iter().map(|t| t.lock.as_str()))
        .collect();
    (0..masters(spec))
        .map(|m| {
            let mut command = words(&["EVAL", CLOCK_JUMP, "0", &ms.to_string()]);
            let own = locks.iter().filter(|l| master_of(spec, l) == m);
            command.extend(own.map(|l| Bytes::from(l.to_string())));
            (To::Master(m), command)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::tests::{client, critical, spec, thread};
    use fake_redis::{Engine, ManualClock, Value};

    /// The one jump outside a cluster.
    fn jump(s: &SimSpec, ms: i64) -> Vec<Bytes> {
        let mut jumps = clock_jumps(s, ms);
        assert_eq!(jumps.len(), 1);
        let (to, command) = jumps.remove(0);
        assert_eq!(to, To::Master(0));
        command
    }

    fn run(engine: &mut Engine, conn: fake_redis::ConnId, command: Vec<Bytes>) -> Value {
        let mut replies = engine.execute(conn, command).replies;
        assert_eq!(replies.len(), 1, "{replies:?}");
        replies.remove(0)
    }

    /// The clock-jump script (run here on fake-redis, whose Lua and
    /// commands are tested against a real Redis) moves the remaining TTL
    /// of the spec's lock and of unlock latches by the jump, leaves a key
    /// it would expire 1 ms, lengthens TTLs on a jump back, and touches
    /// no other key.
    #[test]
    fn a_clock_jump_moves_the_remaining_ttls_of_the_lock_keys() {
        let clock = ManualClock::new(1_000_000);
        let mut engine = Engine::new(std::sync::Arc::new(clock.clone()));
        let conn = engine.connect();
        let s = spec(vec![client("A", vec![thread(0, critical(1_000))])]);
        let lock = s.clients[0].threads[0].lock.as_str().to_owned();
        let latch = format!("redisson_unlock_latch:{{{lock}}}:r1");
        for (key, ms) in [
            (lock.as_str(), "25000"),
            (&latch, "5000"),
            ("other", "5000"),
        ] {
            run(&mut engine, conn, words(&["SET", key, "1", "PX", ms]));
        }
        assert_eq!(run(&mut engine, conn, jump(&s, 10_000)), Value::Int(2));
        let pttl = |engine: &mut Engine, key: &str| run(engine, conn, words(&["PTTL", key]));
        assert_eq!(pttl(&mut engine, &lock), Value::Int(15_000));
        assert_eq!(pttl(&mut engine, &latch), Value::Int(1));
        assert_eq!(pttl(&mut engine, "other"), Value::Int(5_000));
        run(&mut engine, conn, jump(&s, -2_000));
        assert_eq!(pttl(&mut engine, &lock), Value::Int(17_000));
    }
}
