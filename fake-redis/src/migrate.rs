//! A slot's keys moving to another node, as `MIGRATE` moves them for
//! `redis-cli --cluster reshard`: each key leaves this node and arrives on
//! the other with its value and its remaining time to live
//! (`DUMP`/`RESTORE` with `PTTL`); both writes go to the nodes' replicas.
//! A key the other node already holds stays here, as `MIGRATE` without
//! `REPLACE` refuses it (`BUSYKEY`).

use crate::Engine;
use crate::slot::key_slot;

impl Engine {
    /// Moves every live key of `slot` from this node to `to`; how many
    /// moved. The slot's ownership is not changed (`CLUSTER SETSLOT`
    /// does that).
    pub fn migrate_slot(&mut self, slot: u16, to: &mut Engine) -> usize {
        let (now, then) = (self.now(), to.now());
        let keys: Vec<bytes::Bytes> = self.dbs[0]
            .live_entries(now)
            .filter(|(k, _)| key_slot(k) == slot)
            .map(|(k, _)| bytes::Bytes::copy_from_slice(k))
            .collect();
        let mut moved = 0;
        for key in keys {
            if to.dbs[0].peek(&key, then).is_some() {
                continue;
            }
            let Some(mut entry) = self.dbs[0].peek(&key, now).cloned() else {
                continue;
            };
            entry.expires_at = entry.expires_at.map(|at| at - now + then);
            self.dbs[0].remove(&key, now);
            to.dbs[0].restore(key, entry);
            moved += 1;
        }
        self.after_command();
        to.after_command();
        moved
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bytes::Bytes;

    use crate::{Engine, ManualClock, Value};

    fn run(e: &mut Engine, words: &[&str]) -> Value {
        let conn = e.connect();
        let args: Vec<Bytes> = words.iter().map(|w| Bytes::from(w.to_string())).collect();
        e.execute(conn, &args).replies.remove(0)
    }

    /// `{bar}` keys (slot 5061) move with their TTLs; `foo` (slot 12182)
    /// stays; a key the target holds is left where it is.
    #[test]
    fn a_slot_s_keys_move_with_their_ttl() {
        let clock = Arc::new(ManualClock::new(1_000));
        let (mut a, mut b) = (Engine::new(clock.clone()), Engine::new(clock));
        run(&mut a, &["HSET", "{bar}1", "f", "1"]);
        run(&mut a, &["PEXPIRE", "{bar}1", "5000"]);
        run(&mut a, &["SET", "{bar}2", "x"]);
        run(&mut a, &["SET", "foo", "y"]);
        run(&mut b, &["SET", "{bar}2", "z"]);
        assert_eq!(a.migrate_slot(5061, &mut b), 1);
        assert_eq!(
            run(&mut b, &["HGET", "{bar}1", "f"]),
            Value::Bulk("1".into())
        );
        assert_eq!(run(&mut b, &["PTTL", "{bar}1"]), Value::Int(5000));
        assert_eq!(run(&mut a, &["EXISTS", "{bar}1"]), Value::Int(0));
        assert_eq!(run(&mut b, &["GET", "{bar}2"]), Value::Bulk("z".into()));
        assert_eq!(run(&mut a, &["GET", "{bar}2"]), Value::Bulk("x".into()));
        assert_eq!(run(&mut a, &["GET", "foo"]), Value::Bulk("y".into()));
    }
}
