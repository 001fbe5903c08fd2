//! A stop-the-world pause of the client's JVM: [`RedissonClient::freeze`]
//! holds every input (reply, message, timer firing) back, and
//! [`RedissonClient::thaw`] hands them over in the order they came,
//! letting what each one wakes run before the next. A caller whose own
//! code fell due meanwhile (a thread's work that ended during the pause)
//! takes a turn among them ([`RLock::resume_turn`]), so it acts before
//! a timer that fell due after it, as on the simulator's fast engine.

use std::collections::VecDeque;

use tokio::sync::oneshot;

use super::{RLock, RedissonClient, State};
use crate::{Millis, Transport};

/// An input held back while the client is frozen.
type Input = Box<dyn FnOnce(&mut State, Millis) + Send>;

/// What a frozen client holds back, in the order it came.
pub(super) enum Deferred {
    /// An input (a reply, a message, a timer's firing).
    Input(Input),
    /// A caller's own code falling due (a thread whose work ended
    /// meanwhile, [`RLock::resume_turn`]): it runs in its turn.
    Turn(oneshot::Sender<()>),
}

impl<T: Transport> RedissonClient<T> {
    /// Stops the client's code, as a stop-the-world pause: replies,
    /// messages and timer firings are held back, in order, until
    /// [`RedissonClient::thaw`]. Calls made meanwhile still start (the
    /// caller is the one to stop making them). For fault injection.
    pub fn freeze(&self) {
        let mut state = self.shared.lock();
        if state.frozen.is_none() {
            state.frozen = Some(VecDeque::new());
        }
    }

    /// Ends [`RedissonClient::freeze`]: what was held back is handled now,
    /// in arrival order, at the current time (timers fire late). After
    /// each, the tasks it woke (a caller whose reply it was, a turn)
    /// run before the next, so a thread whose work ended during the
    /// freeze acts before a timer that fell due after it, as the
    /// simulator's pause has it; what arrives meanwhile queues behind.
    pub async fn thaw(&self) {
        loop {
            {
                let mut state = self.shared.lock();
                let next = match &mut state.frozen {
                    Some(deferred) => deferred.pop_front(),
                    None => return,
                };
                match next {
                    None => {
                        state.frozen = None;
                        return;
                    }
                    Some(_) if state.closed => {
                        state.frozen = None;
                        return;
                    }
                    Some(Deferred::Input(apply)) => {
                        apply(&mut state, self.shared.now());
                        self.shared.drive(&mut state);
                    }
                    Some(Deferred::Turn(turn)) => {
                        let _ = turn.send(());
                    }
                }
            }
            tokio::task::yield_now().await;
        }
    }
}

impl<T: Transport> RLock<T> {
    /// For a caller whose own code fell due while the client is frozen
    /// (a thread's work ended during a stop-the-world pause): a turn in
    /// the held-back inputs, given when [`RedissonClient::thaw`] reaches
    /// it. `None` when the client runs.
    pub fn resume_turn(&self) -> Option<oneshot::Receiver<()>> {
        let mut state = self.shared.lock();
        let deferred = state.frozen.as_mut()?;
        let (tx, rx) = oneshot::channel();
        deferred.push_back(Deferred::Turn(tx));
        Some(rx)
    }
}
