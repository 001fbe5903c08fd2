//! `pubsub-closed-entry-dropped` (Redisson 3.46.0, #6026, PR #6541,
//! commit 2595dc70b).
//!
//! In Sentinel mode a restart of the primary marks its
//! `ClientConnectionsEntry` down (`nodeDown`), and `reattachPubSub` closes
//! every pub/sub connection of the entry for good (`closeAsync`) and asks
//! `PublishSubscribeService.reattachPubSub(connection)` to move each of its
//! channels elsewhere: unsubscribe from the closed connection, then
//! subscribe again. The unsubscription's status runs
//! `PublishSubscribeService.release(entry)`, which gives the channel's slot
//! back to the connection's `PubSubConnectionEntry` and, while the entry
//! still counts other channels (it is not free), keeps it on the
//! `entry2PubSubConnection` list of connections with free slots (read at
//! redisson-3.27.1, 3.27.2, 3.45.1: `release`, lines 715-729 at 3.45.1).
//! The closed connection is then taken for the channel's own
//! resubscription and for every later subscription to the primary: their
//! `SUBSCRIBE` cannot be written, the failure's unsubscription on the same
//! closed connection never completes and keeps the channel's
//! `AsyncSemaphore`, and each later subscription to that channel times out
//! with "Unable to acquire subscription lock after 7500ms" (issue #6026,
//! reported on 3.27.2 and 3.32.0 with Redis 6.2.13: new listeners fail so,
//! and `PUBSUB CHANNELS` shows the old ones were never subscribed again).
//! A single-server client is not affected: its connections are reconnected
//! in place by `ConnectionWatchdog`, which subscribes their channels again.
//!
//! locksim models a client in [`ServerMode::Sentinel`](crate::ServerMode)
//! whose connections close while it has a subscription in use: the
//! subscriptions in use are not sent again (their waiters hear no unlock
//! message; `RedissonLockEntry`'s promise stays complete, so a thread that
//! joins one waits on a latch nothing releases, and wakes only when its
//! wait for the TTL runs out), and every new subscription fails after
//! `subscriptionTimeout` (7 500 ms) with Redisson's text, for the
//! client's lifetime (`lock()` throws it). With no subscription in use the
//! entry was free and already back in the pool, so nothing stays behind.
//! The first release the issue names is 3.27.2, but the path is older:
//! `release` keeps a not-free entry on the free list without asking
//! whether its connection closed at 3.27.1 as at 3.45.1, and at 3.20.0
//! and 3.25.0 in its earlier form (`release(entry, msEntry)`); 3.12.0 and
//! 3.17.0 keep a free list with no such check either (their reattach
//! path not read in detail). locksim gives the defect to every release
//! before this switch.
//!
//! After: `release` drops an entry whose connection is closed from the free
//! list (`if (entry.getConnection().isClosed()) ee.getEntries().remove(entry)`,
//! line 815 at redisson-3.46.0), so the resubscriptions and new
//! subscriptions take fresh connections and Redisson resubscribes as in
//! single-server mode.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "pubsub-closed-entry-dropped",
    since: Some(Version::new(3, 46, 0)),
    upstream: "#6026",
    summary: "in Sentinel mode, a pub/sub connection closed by a primary restart leaves the free list (3.45.x and earlier: subscriptions stop for the client's lifetime)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{
        Call, CallOutcome, Config, Event, LockError, Millis, Purpose, ServerMode, ThreadId,
        TransportError, Value,
    };

    const T1: ThreadId = ThreadId(1);
    const T2: ThreadId = ThreadId(2);

    fn client(version: &str, mode: ServerMode) -> Harness {
        Harness::with_config(
            Config::builder()
                .release(release(version))
                .mode(mode)
                .build()
                .unwrap(),
        )
    }

    /// T1 waits in `lock()` when the connections close (the primary
    /// restarted). A single-server client of 3.45.0, and a Sentinel one of
    /// 3.46.0, subscribe again; a Sentinel client of 3.45.0 does not. A
    /// machine that resubscribed in every mode and release, or in none,
    /// fails one of the rows.
    #[test]
    fn a_sentinel_client_before_3_46_does_not_resubscribe() {
        for (version, mode, resubscribes) in [
            ("3.45.0", ServerMode::Single, true),
            ("3.45.0", ServerMode::Sentinel, false),
            ("3.46.0", ServerMode::Sentinel, true),
        ] {
            let mut h = client(version, mode);
            h.call(T1, "l", Call::Lock { lease: None }).unwrap();
            let req = h.held_then_subscribed(30_000);
            h.reply(req, Value::Int(30_000));
            h.m.on_connection_lost(h.now);
            if resubscribes {
                assert!(matches!(h.expect_event(), Event::Resubscribing { .. }));
                let _ = h.expect_subscribe();
            } else {
                let Event::PubSubStopped { channels } = h.expect_event() else {
                    panic!("expected PubSubStopped");
                };
                assert_eq!(channels, ["redisson_lock__channel:{l}"]);
            }
            h.expect_quiet();
        }
    }

    /// After the wedge, T2's `lock()` on another lock needs a new
    /// subscription: no `SUBSCRIBE` goes out, and 7 500 ms later the call
    /// throws Redisson's "Unable to acquire subscription lock" (#6026's
    /// Problem 1). 3.46.0 subscribes at once.
    #[test]
    fn after_the_wedge_a_new_subscription_times_out() {
        for (version, wedged) in [("3.45.0", true), ("3.46.0", false)] {
            let mut h = client(version, ServerMode::Sentinel);
            h.call(T1, "l", Call::Lock { lease: None }).unwrap();
            let req = h.held_then_subscribed(30_000);
            h.reply(req, Value::Int(30_000));
            h.m.on_connection_lost(h.now);
            let _ = h.expect_event();
            if !wedged {
                let sub = h.expect_subscribe();
                h.reply(sub, Value::Int(1));
            }
            h.call(T2, "m", Call::Lock { lease: None }).unwrap();
            let req = h.expect(Purpose::Acquire);
            h.reply(req, Value::Int(30_000));
            if !wedged {
                let _ = h.expect_subscribe();
                continue;
            }
            h.expect_quiet();
            h.advance(7_499);
            assert_eq!(h.returned(T2), None);
            h.advance(1);
            assert_eq!(
                h.expect_return(T2),
                Err(LockError::Transport(TransportError::SubscriptionTimeout(
                    7_500
                )))
            );
            assert_eq!(h.now, Millis(7_500));
        }
    }

    /// A Sentinel client with no subscription in use when its connections
    /// close has nothing on a closed connection: later subscriptions work
    /// in every release.
    #[test]
    fn no_subscription_in_use_no_wedge() {
        let mut h = client("3.45.0", ServerMode::Sentinel);
        h.m.on_connection_lost(h.now);
        h.call(T1, "l", Call::Lock { lease: None }).unwrap();
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Int(30_000));
        let sub = h.expect_subscribe();
        h.reply(sub, Value::Int(1));
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Nil);
        h.expect_unsubscribe();
        assert_eq!(h.expect_return(T1), Ok(CallOutcome::Acquired { token: None }));
    }
}
