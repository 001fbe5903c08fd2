//! A gate the engine closes to stop code on a host: a client's threads and
//! its lock (a stop-the-world pause), or Redis's reading (a Redis pause,
//! through [`super::delay::DelayedStream`]).

use std::future::poll_fn;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

#[derive(Debug, Default)]
struct State {
    /// Open pauses (they may overlap): the gate is closed while > 0.
    closed: u32,
    /// Bumped on every open and close, so a watcher sees each change.
    changes: u64,
    wakers: Vec<Waker>,
}

/// Shared by the engine's loop and the tasks it stops. Cloning shares it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Gate(Arc<Mutex<State>>);

impl Gate {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One more pause.
    pub(crate) fn close(&self) {
        let mut s = self.lock();
        s.closed += 1;
        s.changes += 1;
        s.wakers.drain(..).for_each(Waker::wake);
    }

    /// One pause fewer; the gate opens when none is left.
    pub(crate) fn open(&self) {
        let mut s = self.lock();
        s.closed = s.closed.saturating_sub(1);
        s.changes += 1;
        s.wakers.drain(..).for_each(Waker::wake);
    }

    /// How many changes it has seen: where a new watcher starts.
    pub(crate) fn changes(&self) -> u64 {
        self.lock().changes
    }

    /// A change that opens and closes nothing: a watcher of
    /// [`Gate::changed`] sees it (a client's clock changing its rate).
    pub(crate) fn bump(&self) {
        let mut s = self.lock();
        s.changes += 1;
        s.wakers.drain(..).for_each(Waker::wake);
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.lock().closed > 0
    }

    fn wait(&self, cx: &mut Context<'_>, s: &mut State) {
        if !s.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            s.wakers.push(cx.waker().clone());
        }
    }

    /// Whether the gate is closed; if it is, `cx` is woken when it
    /// changes.
    pub(crate) fn is_closed_for(&self, cx: &mut Context<'_>) -> bool {
        let mut s = self.lock();
        if s.closed == 0 {
            return false;
        }
        self.wait(cx, &mut s);
        true
    }

    /// Ready once the gate is open.
    pub(crate) async fn opened(&self) {
        poll_fn(|cx| {
            if self.is_closed_for(cx) {
                Poll::Pending
            } else {
                Poll::Ready(())
            }
        })
        .await
    }

    /// Ready at the next change after `seen` (returned by the last call;
    /// start with 0); gives whether the gate is now closed.
    pub(crate) async fn changed(&self, seen: &mut u64) -> bool {
        poll_fn(|cx| {
            let mut s = self.lock();
            if s.changes != *seen {
                *seen = s.changes;
                return Poll::Ready(s.closed > 0);
            }
            self.wait(cx, &mut s);
            Poll::Pending
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Overlapping pauses: the gate opens only when the last one ends, and
    /// a watcher sees every change.
    #[tokio::test]
    async fn overlapping_pauses() {
        let gate = Gate::default();
        let mut seen = 0;
        gate.close();
        gate.close();
        assert!(gate.changed(&mut seen).await);
        gate.open();
        assert!(gate.is_closed());
        assert!(gate.changed(&mut seen).await, "one pause is still open");
        gate.open();
        assert!(!gate.changed(&mut seen).await);
        gate.opened().await;
    }
}
