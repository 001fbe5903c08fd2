//! The client's pub/sub subscriptions and their latches.
//!
//! Redisson keeps one `RedissonLockEntry` per (client, lock): a subscription
//! to `redisson_lock__channel:{name}` shared by all the client's threads
//! waiting for that lock (reference counted; unsubscribed when the last
//! waiter leaves), and a semaphore (the latch). An unlock message releases
//! one permit: it wakes the first waiting thread, or, if none waits right
//! now (its attempt is in flight), stays for the next one to take, so a
//! message that arrives between an attempt and the wait is not lost.

use std::collections::VecDeque;

use fake_redis::Value;
use tracing::debug;

use super::command::UNLOCK_MESSAGE;
use super::{LockClient, Output};
use crate::{LockError, LockName, Millis, ThreadId, TransportError};

/// One channel's subscription and latch.
#[derive(Debug, Clone)]
pub(super) struct Subscription {
    /// Threads holding a reference (waiting for the lock).
    refs: u32,
    /// Whether Redis confirmed the subscription.
    confirmed: bool,
    /// Released permits nobody took yet.
    permits: u64,
    /// Threads waiting on the latch, first come first woken.
    queue: VecDeque<ThreadId>,
}

impl LockClient {
    /// Takes a reference on `lock`'s subscription, subscribing if it is the
    /// first; returns whether the subscription is already confirmed.
    pub(super) fn join(&mut self, now: Millis, lock: &LockName) -> bool {
        let channel = lock.channel();
        if let Some(subscription) = self.subscriptions.get_mut(&channel) {
            subscription.refs += 1;
            return subscription.confirmed;
        }
        self.subscriptions.insert(
            channel,
            Subscription {
                refs: 1,
                confirmed: false,
                permits: 0,
                queue: VecDeque::new(),
            },
        );
        self.send_subscribe(now, lock.clone());
        false
    }

    /// Drops `thread`'s reference; the last one out unsubscribes.
    pub(super) fn leave(&mut self, thread: ThreadId, channel: &str) {
        let Some(subscription) = self.subscriptions.get_mut(channel) else {
            return;
        };
        subscription.queue.retain(|t| *t != thread);
        subscription.refs = subscription.refs.saturating_sub(1);
        if subscription.refs == 0 {
            self.subscriptions.remove(channel);
            self.push(Output::Unsubscribe {
                channel: channel.to_owned(),
            });
        }
    }

    /// Takes a permit if one is free (true); else queues `thread` (false).
    pub(super) fn latch_acquire(&mut self, channel: &str, thread: ThreadId) -> bool {
        let Some(subscription) = self.subscriptions.get_mut(channel) else {
            return false;
        };
        if subscription.permits > 0 {
            subscription.permits -= 1;
            true
        } else {
            subscription.queue.push_back(thread);
            false
        }
    }

    /// `thread` stopped waiting on the latch (its timer ran out).
    pub(super) fn latch_forget(&mut self, channel: &str, thread: ThreadId) {
        if let Some(subscription) = self.subscriptions.get_mut(channel) {
            subscription.queue.retain(|t| *t != thread);
        }
    }

    pub(super) fn on_subscribe_reply(
        &mut self,
        now: Millis,
        channel: &str,
        reply: Result<Value, TransportError>,
    ) {
        let waiting: Vec<ThreadId> = self
            .calls
            .keys()
            .copied()
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
                    self.finish(thread, Err(LockError::Transport(error.clone())));
                }
            }
        }
    }

    pub(super) fn handle_message(&mut self, now: Millis, channel: &str, payload: &[u8]) {
        if payload != UNLOCK_MESSAGE.as_bytes() {
            debug!(channel, "message other than the unlock message: ignored");
            return;
        }
        let Some(subscription) = self.subscriptions.get_mut(channel) else {
            return;
        };
        match subscription.queue.pop_front() {
            Some(thread) => self.wake(now, thread),
            None => subscription.permits += 1,
        }
    }
}
