//! A cluster node's redirects and its "try again" answers, as
//! `RedisExecutor.checkAttemptPromise` takes them.
//!
//! Read at tags redisson-3.16.0, 3.25.0 and 4.7.0 (`RedisExecutor`; in
//! `CommandAsyncService.checkAttemptFuture` at 3.10.5-3.11.x):
//! - `MOVED <slot> <host:port>`: the command goes again at once to the
//!   node named, as the same attempt (`handleRedirect`; a redirect
//!   spends none of `retryAttempts`). A `MOVED` answering a command that
//!   a `MOVED` already sent to that node fails it ("MOVED redirection
//!   loop detected"). A batch (a lock script with its `WAIT`) goes again
//!   whole.
//! - `ASK <slot> <host:port>`: the same, with `ASKING` sent first on that
//!   node's connection (`sendCommand`), for this send and its resends.
//! - `TRYAGAIN` (a multi-key command during a slot's migration) and
//!   `LOADING`: sent again after the retry delay while attempts remain
//!   (`RedisRetryException` from 3.25.0, the two classes by name before).
//!   `CLUSTERDOWN` is retried so from 3.13.2, but no engine of locksim's
//!   answers it.
//! - The address of a redirect that is none of the client's masters
//!   fails the command (`createNodeNotFoundException`): locksim's slots
//!   only ever move between the cluster's masters.
//!
//! Redisson's slot table changes only at its topology scan
//! (`ClusterConnectionManager.checkSlotsMigration`, every `scanInterval`,
//! 1 s by default), never at a `MOVED`; until then every command of a
//! moved slot goes to its old master first. locksim's client learns a
//! slot's new master from the first `MOVED` that names it, at the next
//! multiple of `scanInterval` on its clock: the scan that would have seen
//! it (a slot that moved while the client sent nothing for it costs one
//! `MOVED` more than Redisson's scan would).

use super::request::{Pending, Tries};
use super::{LockClient, Output, Purpose};
use crate::{Millis, RequestId, Shard, TransportError, Value};

/// Where a redirect sent a command, for its resends too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Redirect {
    /// `MOVED`: the slot is served by this master now.
    Moved(Shard),
    /// `ASK`: this master is importing the slot; `ASKING` goes first.
    Ask(Shard),
}

impl Redirect {
    /// The master it names.
    pub(super) fn shard(self) -> Shard {
        match self {
            Redirect::Moved(s) | Redirect::Ask(s) => s,
        }
    }
}

/// A `MOVED` or `ASK` error's kind, slot and address.
fn parse(text: &str) -> Option<(bool, u16, &str)> {
    let mut words = text.split(' ');
    let moved = match words.next()? {
        "MOVED" => true,
        "ASK" => false,
        _ => return None,
    };
    let slot = words.next()?.parse().ok()?;
    let addr = words.next()?;
    Some((moved, slot, addr))
}

/// Whether Redisson sends a command answered `text` again after the
/// retry delay (a `RedisRetryException`).
fn tried_again(text: &str) -> bool {
    text.starts_with("TRYAGAIN ") || text.starts_with("LOADING ")
}

impl LockClient {
    /// Takes a redirect or a "try again" answer to `pending`, as Redisson
    /// does; gives `pending` back when `reply` is neither.
    pub(super) fn redirected(
        &mut self,
        now: Millis,
        pending: Pending,
        reply: &Result<Value, TransportError>,
    ) -> Option<Pending> {
        let Err(TransportError::Redis(text)) = reply else {
            return Some(pending);
        };
        if tried_again(text) {
            if pending.tries.retried >= self.attempts_of(&pending) {
                return Some(pending);
            }
            self.reach(super::Sometimes::TriedAgain);
            self.retry_later(now, pending);
            return None;
        }
        let Some((moved, slot, addr)) = parse(text) else {
            return Some(pending);
        };
        let Some(shard) = self.node_at(addr) else {
            let e = format!("Node for slot: {slot} with address {addr} hasn't been discovered yet");
            self.fail_pending(now, pending, TransportError::Redis(e));
            return None;
        };
        if moved && pending.tries.redirect == Some(Redirect::Moved(shard)) {
            let e = format!(
                "MOVED redirection loop detected. Node redis://{addr} has further redirect to redis://{addr}"
            );
            self.fail_pending(now, pending, TransportError::Redis(e));
            return None;
        }
        self.reach(super::Sometimes::Redirected);
        let mut tries = pending.tries;
        if moved {
            tries.redirect = Some(Redirect::Moved(shard));
        } else {
            tries.redirect = Some(Redirect::Ask(shard));
        }
        self.forget_sync(&pending);
        self.transmit(now, pending.kind, pending.lock, pending.owner, tries);
        None
    }

    /// The master a request for `lock` goes to: where a redirect sent it,
    /// or its lock's.
    pub(super) fn route_of(&self, lock: &crate::LockName, tries: Tries) -> Shard {
        match (tries.to, tries.redirect) {
            (Some(shard), _) => shard,
            (None, Some(redirect)) => redirect.shard(),
            (None, None) => self.shard_of(lock.as_str()),
        }
    }

    /// How many resends `pending` has: a lock script's batch has the
    /// client's `retryAttempts`, a command sent alone its own.
    pub(super) fn attempts_of(&self, pending: &Pending) -> u32 {
        let batched = pending.sync.is_some() || pending.tries.replicas == Some(0);
        if batched {
            self.config.retry_attempts
        } else {
            self.retries_for(&pending.kind)
        }
    }

    fn fail_pending(&mut self, now: Millis, pending: Pending, e: TransportError) {
        let sent_at = pending.sent_at;
        self.forget_sync(&pending);
        self.deliver(now, pending.owner, Err(e), sent_at);
    }

    /// The master at `addr` (`host:port`), by the cluster's addresses.
    pub(super) fn node_at(&self, addr: &str) -> Option<Shard> {
        let i = self.config.cluster_nodes.iter().position(|a| a == addr)?;
        u16::try_from(i).ok().map(Shard)
    }

    /// `ASKING` before a command an `ASK` sent to `shard`: its reply
    /// (`OK`) is read by nobody.
    pub(super) fn send_asking(&mut self, lock: &crate::LockName, shard: Shard) {
        let request = RequestId(self.next_request);
        self.next_request += 1;
        self.push(Output::Send {
            request,
            purpose: Purpose::Asking,
            lock: lock.clone(),
            shard,
            command: [bytes::Bytes::from_static(b"ASKING")].into(),
            attempt: 0,
            staged: false,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use crate::machine::harness::{Harness, release};
    use crate::{Call, CallOutcome, Config, Output, Purpose, Shard, ThreadId, Value};

    const T1: ThreadId = ThreadId(1);

    /// A 4.7.0 client of a three-master cluster at 127.0.0.1:7000-7002;
    /// "orders" (slot 105) is master 0's.
    fn cluster(version: &str) -> Harness {
        let config = Config::builder()
            .release(release(version))
            .cluster_shards(3)
            .cluster_nodes((0..3).map(|i| format!("127.0.0.1:700{i}")).collect())
            .build()
            .unwrap();
        Harness::with_config(config)
    }

    /// `tryLock(0, 10 s)` of "orders" by thread 1, after the server
    /// probe of a client's first lock script (3.26.1+: a cluster client
    /// sends its scripts as batches, `info-outside-single-server`).
    fn try_lock(h: &mut Harness) {
        let lease = Some(crate::Millis(10_000));
        h.call(T1, "orders", Call::TryLock { wait: None, lease })
            .unwrap();
        if h.m.needs_probe() {
            h.probed();
        }
    }

    /// The next send: its request, purpose, master and first word.
    fn sent(h: &mut Harness) -> (crate::RequestId, Purpose, Shard, String) {
        loop {
            match h.next() {
                Some(Output::Send {
                    request,
                    purpose,
                    shard,
                    command,
                    ..
                }) => {
                    let word = crate::lossy_text(&command[0]).into_owned();
                    return (request, purpose, shard, word);
                }
                Some(_) => continue,
                None => panic!("nothing sent"),
            }
        }
    }

    /// `MOVED`: the acquire goes again at once to the master named, as
    /// the same attempt; the client's next acquire of the slot goes to the
    /// old master until the scan (1 s), straight to the new one after.
    #[test]
    fn moved_goes_to_the_node_named_and_only_the_scan_moves_the_slot() {
        let mut h = cluster("4.7.0");
        try_lock(&mut h);
        let (req, purpose, shard, _) = sent(&mut h);
        assert_eq!((purpose, shard), (Purpose::Acquire, Shard(0)));
        h.reply(req, Value::Error("MOVED 105 127.0.0.1:7002".into()));
        let (req, purpose, shard, _) = sent(&mut h);
        assert_eq!((purpose, shard), (Purpose::Acquire, Shard(2)));
        h.reply(req, Value::Nil);
        assert!(matches!(
            h.expect_return(T1),
            Ok(CallOutcome::Acquired { .. })
        ));
        h.call(T1, "orders", Call::Unlock).unwrap();
        let (req, _, shard, _) = sent(&mut h);
        assert_eq!(shard, Shard(0), "no scan yet: the old master first");
        h.reply(req, Value::Error("MOVED 105 127.0.0.1:7002".into()));
        let (req, _, shard, _) = sent(&mut h);
        assert_eq!(shard, Shard(2));
        h.reply(req, Value::Int(1));
        h.expect_return(T1).unwrap();
        h.show_scans = true;
        h.advance(1_000);
        let (req, purpose, ..) = sent(&mut h);
        assert_eq!(purpose, Purpose::Scan);
        let addrs = h.m.config().cluster_nodes.clone();
        h.reply(
            req,
            crate::machine::harness::nodes_reply(&addrs, Some((105, 2))),
        );
        try_lock(&mut h);
        let (_, _, shard, _) = sent(&mut h);
        assert_eq!(shard, Shard(2), "the scan at 1 s read it");
    }

    /// A send a redirect makes was decided at the first send (`staged`),
    /// as a resend is: a renewal sent on by `MOVED` after its thread's
    /// unlock returned is not the watchdog renewing (4.7.0 seed 14283: a
    /// renewal held by a partition met `MOVED` 19 ms after the unlock
    /// timed out, and the oracle called its redirect a renewal after the
    /// unlock).
    #[test]
    fn a_redirected_send_is_staged() {
        let mut h = cluster("4.7.0");
        try_lock(&mut h);
        let (req, ..) = sent(&mut h);
        h.reply(req, Value::Error("MOVED 105 127.0.0.1:7001".into()));
        match h.next() {
            Some(Output::Send { staged, shard, .. }) => {
                assert_eq!((staged, shard), (true, Shard(1)))
            }
            other => panic!("expected the redirected acquire, got {other:?}"),
        }
    }

    /// A second `MOVED` to the node a `MOVED` sent it to is a loop: the
    /// call fails with Redisson's text.
    #[test]
    fn a_moved_loop_fails_the_call() {
        let mut h = cluster("4.7.0");
        try_lock(&mut h);
        let (req, ..) = sent(&mut h);
        h.reply(req, Value::Error("MOVED 105 127.0.0.1:7001".into()));
        let (req, _, shard, _) = sent(&mut h);
        assert_eq!(shard, Shard(1));
        h.reply(req, Value::Error("MOVED 105 127.0.0.1:7001".into()));
        let e = h.expect_return(T1).unwrap_err().to_string();
        assert!(e.contains("MOVED redirection loop detected"), "{e}");
    }

    /// `ASK`: `ASKING` then the command on the node named; the slot is
    /// not learned (the next command goes to the old master again).
    #[test]
    fn ask_sends_asking_first() {
        let mut h = cluster("4.7.0");
        try_lock(&mut h);
        let (req, ..) = sent(&mut h);
        h.reply(req, Value::Error("ASK 105 127.0.0.1:7001".into()));
        let (_, purpose, shard, word) = sent(&mut h);
        assert_eq!(
            (purpose, shard, word.as_str()),
            (Purpose::Asking, Shard(1), "ASKING")
        );
        let (req, purpose, shard, _) = sent(&mut h);
        assert_eq!((purpose, shard), (Purpose::Acquire, Shard(1)));
        h.reply(req, Value::Nil);
        h.expect_acquired(T1);
        h.advance(2_000);
        h.call(T1, "orders", Call::Unlock).unwrap();
        let (_, _, shard, _) = sent(&mut h);
        assert_eq!(shard, Shard(0));
    }

    /// A redirect to an address that is none of the masters fails the
    /// command.
    #[test]
    fn an_unknown_node_fails_the_call() {
        let mut h = cluster("4.7.0");
        try_lock(&mut h);
        let (req, ..) = sent(&mut h);
        h.reply(req, Value::Error("MOVED 105 10.9.9.9:7000".into()));
        let e = h.expect_return(T1).unwrap_err().to_string();
        assert!(e.contains("hasn't been discovered yet"), "{e}");
    }

    /// `TRYAGAIN`: the unlock (a multi-key script) is sent again after
    /// the retry delay while attempts remain (three times), then fails
    /// with the error; a cluster client's unlock is a batch, which keeps
    /// its retries under 3.37.0+ too. A single server's unlock under
    /// 3.37.0+ has none: a `LOADING` fails it at once.
    #[test]
    fn tryagain_is_retried_while_attempts_remain() {
        let try_again =
            || Value::Error("TRYAGAIN Multiple keys request during rehashing of slot".into());
        for version in ["3.36.0", "3.37.0"] {
            let mut h = cluster(version);
            try_lock(&mut h);
            let (req, ..) = sent(&mut h);
            h.reply(req, Value::Nil);
            h.expect_acquired(T1);
            h.call(T1, "orders", Call::Unlock).unwrap();
            retried_three_times(&mut h, try_again);
        }

        let mut h = Harness::new(release("3.37.0"));
        h.acquire(T1, "orders");
        // Without a cluster's batch: no retry.
        h.call(T1, "orders", Call::Unlock).unwrap();
        let (req, ..) = sent(&mut h);
        h.reply(
            req,
            Value::Error("LOADING Redis is loading the dataset in memory".into()),
        );
        assert!(h.until_return(T1).1.is_err());
    }

    /// The unlock in flight answered `error()` four times, the retry
    /// delay (1.5 s) apart: then it fails with it.
    fn retried_three_times(h: &mut Harness, error: impl Fn() -> Value) {
        for attempt in 0..4 {
            let (req, purpose, ..) = sent(h);
            assert_eq!(purpose, Purpose::Unlock, "attempt {attempt}");
            h.reply(req, error());
            if attempt < 3 {
                assert!(h.returned(T1).is_none());
                h.advance(1_500);
            }
        }
        let e = h.until_return(T1).1.unwrap_err().to_string();
        assert!(e.contains("TRYAGAIN"), "{e}");
    }

    #[test]
    fn redirects_are_read_from_their_text() {
        assert_eq!(
            parse("MOVED 5061 127.0.0.1:7001"),
            Some((true, 5061, "127.0.0.1:7001"))
        );
        assert_eq!(
            parse("ASK 12 10.0.0.2:6380"),
            Some((false, 12, "10.0.0.2:6380"))
        );
        assert_eq!(parse("MOVED x 127.0.0.1:7001"), None);
        assert_eq!(parse("ERR MOVED"), None);
    }
}
