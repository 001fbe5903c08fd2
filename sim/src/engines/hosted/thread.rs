//! One thread's script, run against lockcore's async API on a client host.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use lockcore::{Call, Millis, RLock, RMultiLock};

use super::gate::Gate;
use super::lateness::Lateness;
use super::process::HostTransport;
use super::recorder::{self, Shared};
use crate::engines::fast::process::{Thread, thread_id};
use crate::model::script::Instr;

/// What a thread's task shares with the rest of its process.
pub(crate) struct Ctx {
    pub(crate) c: usize,
    pub(crate) t: usize,
    pub(crate) watchdog_ms: u64,
    /// The spec runs this many times faster than written: the calls made
    /// and the sleeps taken are divided by it; the history keeps the
    /// spec's own values.
    pub(crate) scale: u64,
    pub(crate) recorder: Shared,
    /// Closed while the process is paused.
    pub(crate) gate: Gate,
    /// Makes its wake-ups late while the process is starved.
    pub(crate) starve: Lateness,
    /// The thread's state, which the engine reads at the horizon.
    pub(crate) thread: Rc<RefCell<Thread>>,
    /// The multi-lock its lock steps call, when it has one.
    pub(crate) multi: Option<RMultiLock<HostTransport>>,
}

/// Runs the thread's script to its end, as the fast engine's driver does:
/// a failed acquire skips to the end of its block; work and sleep that
/// end during a pause end when the process runs again.
pub(crate) async fn run(ctx: Ctx, lock: RLock<HostTransport>) {
    loop {
        ctx.gate.opened().await;
        let next = {
            let mut th = ctx.thread.borrow_mut();
            let program = th.program.clone();
            th.cursor.next(&program).cloned()
        };
        let Some(instr) = next else {
            ctx.thread.borrow_mut().done = true;
            let mut rec = recorder::lock(&ctx.recorder);
            let who = rec.who(ctx.c, ctx.t);
            rec.record(crate::model::history::RecordKind::Done { who });
            return;
        };
        match instr {
            Instr::Call { call, skip_to } => call_step(&ctx, &lock, call, skip_to).await,
            Instr::Busy(ms) => {
                ctx.thread.borrow_mut().sleeping = true;
                tokio::time::sleep(Duration::from_millis(ms / ctx.scale)).await;
                ctx.starve.late().await;
                // Ended during a pause: it goes on in its turn among the
                // lock's held-back timers and replies, as on the fast
                // engine, not after all of them.
                if let Some(turn) = lock.resume_turn() {
                    let _ = turn.await;
                }
                ctx.gate.opened().await;
                ctx.thread.borrow_mut().sleeping = false;
            }
            Instr::Write => recorder::lock(&ctx.recorder).write(ctx.c, ctx.t),
            Instr::Loop { .. } | Instr::EndLoop { .. } => {}
        }
    }
}

async fn call_step(ctx: &Ctx, lock: &RLock<HostTransport>, call: Call, skip_to: usize) {
    recorder::lock(&ctx.recorder).call(ctx.c, ctx.t, &call);
    ctx.thread.borrow_mut().pending = Some((call.clone(), skip_to));
    let armed = call
        .is_acquire()
        .then(|| ctx.thread.borrow_mut().interrupt_after.take())
        .flatten();
    if let Some(after) = armed {
        let (lock, scale, t) = (lock.clone(), ctx.scale, ctx.t);
        tokio::task::spawn_local(async move {
            tokio::time::sleep(Duration::from_millis(after / scale)).await;
            lock.interrupt(thread_id(t));
        });
    }
    let scaled = scaled(&call, ctx.scale);
    let result = match &ctx.multi {
        Some(multi) => multi.call(thread_id(ctx.t), scaled).await,
        None => lock.call(thread_id(ctx.t), scaled).await,
    };
    // A reply that reached a paused process is its code's to see on resume.
    ctx.gate.opened().await;
    let failed =
        recorder::lock(&ctx.recorder).returned(ctx.c, ctx.t, &call, &result, ctx.watchdog_ms);
    let mut th = ctx.thread.borrow_mut();
    th.pending = None;
    if failed {
        th.cursor.skip_to(skip_to);
    }
}

/// `call` with its wait and lease divided by `scale` (at least 1 ms).
fn scaled(call: &Call, scale: u64) -> Call {
    if scale <= 1 {
        return call.clone();
    }
    let s = |ms: Option<Millis>| ms.map(|m| Millis((m.0 / scale).max(1)));
    match call {
        Call::Lock { lease } => Call::Lock { lease: s(*lease) },
        Call::LockInterruptibly { lease } => Call::LockInterruptibly { lease: s(*lease) },
        Call::TryLock { wait, lease } => Call::TryLock {
            wait: s(*wait),
            lease: s(*lease),
        },
        Call::LockAsync { lease } => Call::LockAsync { lease: s(*lease) },
        Call::TryLockAsync { wait, lease } => Call::TryLockAsync {
            wait: s(*wait),
            lease: s(*lease),
        },
        Call::TryLockAndGetToken { wait, lease } => Call::TryLockAndGetToken {
            wait: s(*wait),
            lease: s(*lease),
        },
        other => other.clone(),
    }
}
