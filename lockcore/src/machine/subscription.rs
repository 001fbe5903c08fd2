//! The client's pub/sub subscriptions and their latches.
//!
//! Redisson keeps one `RedissonLockEntry` per (client, lock): a subscription
//! to `redisson_lock__channel:{name}` shared by all the client's threads
//! waiting for that lock (reference counted; unsubscribed when the last
//! waiter leaves), and a semaphore (the latch). An unlock message releases
//! one permit: it wakes the first waiting thread, or, if none waits right
//! now (its attempt is in flight), stays for the next one to take, so a
//! message that arrives between an attempt and the wait is not lost.
//! Async calls (`lockAsync`, `tryLockAsync`) wait by a listener instead:
//! a message runs the first listener and still releases its permit.

use std::borrow::Cow;
use std::collections::VecDeque;

use crate::Value;
use tracing::debug;

use super::command::UNLOCK_MESSAGE;
use super::{Event, LockClient, Output, TimerKind};
use crate::kind::READ_UNLOCK_MESSAGE;
use crate::{LockError, LockName, Millis, ServerMode, Switch, ThreadId, TransportError};

/// Redisson's `subscriptionTimeout` default (7 500 ms): how long
/// `PublishSubscribeService.subscribe` waits before it fails the
/// subscription with "Unable to acquire subscription lock".
pub(super) const SUBSCRIPTION_TIMEOUT: Millis = Millis(7_500);

/// One channel's subscription and latch.
#[derive(Debug, Clone)]
pub(super) struct Subscription {
    /// Threads holding a reference (waiting for the lock).
    refs: u32,
    /// Whether Redis confirmed the subscription.
    confirmed: bool,
    /// Tells this subscription's confirmation from an earlier one's.
    generation: u64,
    /// Released permits nobody took yet.
    permits: u64,
    /// Threads waiting on the latch, first come first woken.
    queue: VecDeque<ThreadId>,
    /// Async calls' listeners (`RedissonLockEntry.listeners`), first come
    /// first run.
    listeners: VecDeque<ThreadId>,
    /// The lock whose channel it is.
    lock: LockName,
}

impl LockClient {
    /// The channel `thread` waits for `lock` on: the lock's, or for a
    /// kind whose waiters each have one (the fair lock's
    /// `subscribe(threadId)`), `<channel>:<uuid>:<tid>`.
    pub(super) fn wait_channel<'a>(&self, lock: &'a LockName, thread: ThreadId) -> Cow<'a, str> {
        if !lock.kind().waits_on_own_channel() {
            return Cow::Borrowed(lock.channel());
        }
        Cow::Owned(format!("{}:{}:{}", lock.channel(), self.uuid, thread.0))
    }

    /// Takes a reference on `lock`'s subscription, subscribing if it is the
    /// first; returns whether the subscription is already confirmed.
    pub(super) fn join(&mut self, now: Millis, lock: &LockName, channel: &str) -> bool {
        if let Some(subscription) = self.subscriptions.get_mut(channel) {
            subscription.refs += 1;
            return subscription.confirmed;
        }
        let generation = self.next_generation;
        self.next_generation += 1;
        self.subscriptions.insert(
            channel.to_owned(),
            Subscription {
                refs: 1,
                confirmed: false,
                generation,
                permits: 0,
                queue: VecDeque::new(),
                listeners: VecDeque::new(),
                lock: lock.clone(),
            },
        );
        self.subscribe(now, lock.clone(), channel.to_owned(), generation);
        false
    }

    /// Sends the subscription, unless the client's pub/sub stopped for good
    /// (#6026): then no `SUBSCRIBE` can be written, and Redisson's
    /// subscription times out after `subscriptionTimeout`.
    fn subscribe(&mut self, now: Millis, lock: LockName, channel: String, generation: u64) {
        if self.pubsub_wedged {
            let at = now.plus(self.config.fixed(SUBSCRIPTION_TIMEOUT.0));
            self.set_timer(at, TimerKind::SubscriptionTimeout(channel, generation));
            return;
        }
        self.send_subscribe(now, lock, channel, generation);
    }

    /// A subscription of a client whose pub/sub stopped for good ran out of
    /// `subscriptionTimeout`.
    pub(super) fn on_subscription_timeout(&mut self, now: Millis, channel: &str, generation: u64) {
        let error = TransportError::SubscriptionTimeout(SUBSCRIPTION_TIMEOUT.0);
        self.on_subscribe_reply(now, channel, generation, Err(error));
    }

    /// Drops `thread`'s reference; the last one out unsubscribes.
    pub(super) fn leave(&mut self, thread: ThreadId, channel: &str) {
        let Some(subscription) = self.subscriptions.get_mut(channel) else {
            return;
        };
        subscription.queue.retain(|t| *t != thread);
        subscription.listeners.retain(|t| *t != thread);
        subscription.refs = subscription.refs.saturating_sub(1);
        if subscription.refs == 0 {
            self.subscriptions.remove(channel);
            // A client whose pub/sub stopped for good (#6026) unsubscribes
            // on the closed connection: nothing reaches Redis.
            if self.pubsub_wedged {
                return;
            }
            self.push(Output::Unsubscribe {
                channel: channel.to_owned(),
                shard: self.shard_of(channel),
            });
        }
    }

    /// Takes a permit if one is free (true); else queues `thread` (false).
    pub(super) fn latch_acquire(&mut self, channel: &str, thread: ThreadId) -> bool {
        if self.latch_take(channel) {
            return true;
        }
        if let Some(subscription) = self.subscriptions.get_mut(channel) {
            subscription.queue.push_back(thread);
        }
        false
    }

    /// Takes a permit if one is free, queueing no one (an async call's
    /// `latch.tryAcquire()`).
    pub(super) fn latch_take(&mut self, channel: &str) -> bool {
        match self.subscriptions.get_mut(channel) {
            Some(subscription) if subscription.permits > 0 => {
                subscription.permits -= 1;
                true
            }
            _ => false,
        }
    }

    /// Registers an async call's listener.
    pub(super) fn add_listener(&mut self, channel: &str, thread: ThreadId) {
        if let Some(subscription) = self.subscriptions.get_mut(channel) {
            subscription.listeners.push_back(thread);
        }
    }

    /// Runs the first listener, if any (`tryRunListener`).
    pub(super) fn run_listener(&mut self, now: Millis, channel: &str) {
        let first = self
            .subscriptions
            .get_mut(channel)
            .and_then(|s| s.listeners.pop_front());
        if let Some(thread) = first {
            self.wake(now, thread);
        }
    }

    /// `thread` stopped waiting on the latch or by its listener (its timer
    /// ran out).
    pub(super) fn latch_forget(&mut self, channel: &str, thread: ThreadId) {
        if let Some(subscription) = self.subscriptions.get_mut(channel) {
            subscription.queue.retain(|t| *t != thread);
            subscription.listeners.retain(|t| *t != thread);
        }
    }

    pub(super) fn on_subscribe_reply(
        &mut self,
        now: Millis,
        channel: &str,
        generation: u64,
        reply: Result<Value, TransportError>,
    ) {
        if self.subscriptions.get(channel).map(|s| s.generation) != Some(generation) {
            debug!(channel, "confirmation of a dropped subscription: ignored");
            return;
        }
        let waiting: Vec<ThreadId> = self
            .calls
            .keys()
            .map(|c| c.thread)
            .filter(|t| self.is_subscribing(*t, channel))
            .collect();
        match reply {
            Ok(_) => {
                if let Some(subscription) = self.subscriptions.get_mut(channel) {
                    subscription.confirmed = true;
                }
                for thread in waiting {
                    self.subscribed(now, thread);
                }
            }
            Err(error) => {
                for thread in waiting {
                    let bounded = self
                        .acquiring(thread)
                        .is_some_and(|(_, a)| matches!(a.wait, super::acquire::Wait::For(_)));
                    if bounded {
                        self.reach(super::Sometimes::SubscribeFailedInTryLock);
                    }
                    if bounded && self.switches.has(Switch::SubscribeFailureFalse) {
                        self.give_up(now, thread);
                    } else {
                        self.finish(thread, Err(LockError::Transport(error.clone())));
                    }
                }
                // Threads on the latch still need the channel: Redisson's
                // reconnect goes on trying.
                if self.subscriptions.contains_key(channel) {
                    let at = now.plus(self.config.retry_interval);
                    self.set_timer(at, TimerKind::Resubscribe(channel.to_owned()));
                }
            }
        }
    }

    /// The connections to Redis closed (Redis restarted or went away): as
    /// Redisson's reconnect does, every subscription still in use is sent
    /// again, and counts as unconfirmed until Redis confirms it. Threads
    /// already on the latch keep waiting; messages published meanwhile are
    /// lost, as they are in Redis. The scripts its batches loaded are
    /// forgotten (see `batch_script`).
    ///
    /// Before 3.46, a Sentinel client that had a subscription in use does
    /// not: its closed pub/sub connection stays on the list of connections
    /// with free slots, and every subscription from then on goes to it and
    /// fails (#6026, see
    /// [`Switch::PubSubClosedEntryDropped`](crate::Switch::PubSubClosedEntryDropped)).
    pub fn on_connection_lost(&mut self, now: Millis) {
        self.connection_lost(now);
        self.settle(now);
    }

    fn connection_lost(&mut self, now: Millis) {
        self.forget_batch_scripts();
        if self.pubsub_wedged {
            return;
        }
        if self.closed_entry_kept() {
            self.pubsub_wedged = true;
            let channels = self.subscriptions.keys().cloned().collect();
            self.event(Event::PubSubStopped { channels });
            return;
        }
        let channels: Vec<String> = self.subscriptions.keys().cloned().collect();
        for channel in channels {
            self.resubscribe(now, &channel);
        }
    }

    /// Whether this connection loss leaves a closed pub/sub connection on
    /// the free list (#6026): Sentinel mode before 3.46, with a channel
    /// subscribed (with none, the connection was free and back in its pool).
    fn closed_entry_kept(&self) -> bool {
        self.config.mode == ServerMode::Sentinel
            && !self.switches.has(Switch::PubSubClosedEntryDropped)
            && !self.subscriptions.is_empty()
    }

    /// A failed resubscription's retry is due.
    pub(super) fn on_resubscribe_timer(&mut self, now: Millis, channel: &str) {
        if self
            .subscriptions
            .get(channel)
            .is_some_and(|s| !s.confirmed)
        {
            self.resubscribe(now, channel);
        }
    }

    fn resubscribe(&mut self, now: Millis, channel: &str) {
        let generation = self.next_generation;
        self.next_generation += 1;
        let Some(s) = self.subscriptions.get_mut(channel) else {
            return;
        };
        s.generation = generation;
        s.confirmed = false;
        let lock = s.lock.clone();
        self.event(Event::Resubscribing {
            channel: channel.to_owned(),
        });
        self.subscribe(now, lock, channel.to_owned(), generation);
    }

    pub(super) fn handle_message(&mut self, now: Millis, channel: &str, payload: &[u8]) {
        if payload == READ_UNLOCK_MESSAGE.as_bytes() && self.is_rwlock_channel(channel) {
            self.wake_all(now, channel);
            return;
        }
        if payload != UNLOCK_MESSAGE.as_bytes() {
            debug!(channel, "message other than the unlock message: ignored");
            return;
        }
        // `LockPubSub.onMessage`: run the first async listener, then
        // release a permit, whether or not a listener ran.
        self.run_listener(now, channel);
        let Some(subscription) = self.subscriptions.get_mut(channel) else {
            return;
        };
        match subscription.queue.pop_front() {
            Some(thread) => self.wake(now, thread),
            None => subscription.permits += 1,
        }
    }
}

impl LockClient {
    /// Whether `channel` is a read-write lock's, where `1` means "every
    /// waiter" (an `RLock`'s channel ignores it).
    fn is_rwlock_channel(&self, channel: &str) -> bool {
        self.subscriptions.get(channel).is_some_and(|s| {
            matches!(
                s.lock.kind(),
                crate::LockKind::Read | crate::LockKind::Write
            )
        })
    }

    /// `LockPubSub.onMessage` for `READ_UNLOCK_MESSAGE`: every listener
    /// runs and the latch releases as many permits as it has waiters.
    fn wake_all(&mut self, now: Millis, channel: &str) {
        let listeners = self
            .subscriptions
            .get(channel)
            .map_or(0, |s| s.listeners.len());
        for _ in 0..listeners {
            self.run_listener(now, channel);
        }
        let waiting: Vec<ThreadId> = match self.subscriptions.get_mut(channel) {
            Some(s) => s.queue.drain(..).collect(),
            None => return,
        };
        for thread in waiting {
            self.wake(now, thread);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::Harness;
    use crate::Value;
    use crate::{Call, CallOutcome, Era, Millis, Purpose, ThreadId};

    const T2: ThreadId = ThreadId(2);

    /// A subscription dropped before its confirmation came, then taken
    /// again: the old confirmation must not count for the new one, else the
    /// waiter would attempt before Redis delivers messages to it and could
    /// miss the unlock message (a lost wake-up until the TTL ends).
    #[test]
    fn stale_confirmation_is_ignored() {
        let mut h = Harness::new(Era::Redisson);
        let call = Call::TryLock {
            wait: Some(Millis(100)),
            lease: None,
        };
        h.call(T2, "l", call.clone()).unwrap();
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Int(5_000));
        let old = h.expect_subscribe();
        h.advance(100);
        h.expect_unsubscribe();
        assert_eq!(h.expect_return(T2), Ok(CallOutcome::NotAcquired));
        h.call(T2, "l", call).unwrap();
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Int(5_000));
        let new = h.expect_subscribe();
        h.reply(old, Value::Int(1));
        h.expect_quiet();
        h.reply(new, Value::Int(1));
        let _ = h.expect(Purpose::Acquire);
    }

    /// Payloads other than the unlock message ("0") release nothing.
    #[test]
    fn other_payloads_are_ignored() {
        let mut h = Harness::new(Era::Redisson);
        h.call(T2, "l", Call::Lock { lease: None }).unwrap();
        let req = h.held_then_subscribed(5_000);
        h.reply(req, Value::Int(5_000));
        h.message("l", "1");
        h.message("other", "0");
        h.expect_quiet();
        h.message("l", "0");
        let _ = h.expect(Purpose::Acquire);
    }

    /// Redis restarted while T2 waited on the latch: the machine subscribes
    /// again (Redisson's reconnect), and an unlock message after the new
    /// confirmation wakes T2. Seen in exploration (seed 435, redisson): a
    /// second thread joined the lost subscription and slept out a whole TTL.
    #[test]
    fn connection_loss_resubscribes() {
        let mut h = Harness::new(Era::Redisson);
        h.call(T2, "l", Call::Lock { lease: None }).unwrap();
        let req = h.held_then_subscribed(30_000);
        h.reply(req, Value::Int(30_000));
        h.m.on_connection_lost(h.now);
        assert!(matches!(
            h.expect_event(),
            crate::Event::Resubscribing { .. }
        ));
        let sub = h.expect_subscribe();
        h.reply(sub, Value::Int(1));
        h.message("l", "0");
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Nil);
        h.expect_unsubscribe();
        assert_eq!(
            h.expect_return(T2),
            Ok(CallOutcome::Acquired { token: None })
        );
    }

    /// Redis still down: the resubscription fails and is tried again after
    /// the retry interval, until Redis answers.
    #[test]
    fn failed_resubscription_is_retried() {
        let mut h = Harness::new(Era::Redisson);
        h.call(T2, "l", Call::Lock { lease: None }).unwrap();
        let req = h.held_then_subscribed(30_000);
        h.reply(req, Value::Int(30_000));
        h.m.on_connection_lost(h.now);
        let _ = h.expect_event();
        let sub = h.expect_subscribe();
        h.fail(sub, crate::TransportError::Connection("refused".into()));
        h.expect_quiet();
        h.advance(1_500);
        let _ = h.expect_event();
        let sub = h.expect_subscribe();
        h.reply(sub, Value::Int(1));
        h.expect_quiet();
    }
}
