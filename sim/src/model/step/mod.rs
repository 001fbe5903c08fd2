//! Scenario steps: what a thread's script does, one kind per file.
//!
//! Each kind owns its serde data, its own fields' rules and what the
//! thread runs for it (its [`Instr`]uctions). [`Step`] only dispatches.
//! A new kind is its own file plus one line in the `steps!` registration
//! below; the engines run instructions, not steps, so a kind that lowers
//! onto an existing lockcore call (or onto work, a write, a loop) needs no
//! engine code. A new lockcore call is lockcore's extension, and each
//! engine's bookkeeping of beliefs reads it by its [`lockcore::Call`].

mod fair_lock;
mod fenced_lock;
mod fenced_lock_and_get_token;
mod force_unlock;
mod lock;
mod lock_async;
mod lock_interruptibly;
mod read_lock;
mod repeat;
mod sleep;
mod spin_lock;
mod spin_lock_async;
mod spin_lock_interruptibly;
mod try_fair_lock;
mod try_fenced_lock;
mod try_fenced_lock_and_get_token;
mod try_lock;
mod try_lock_async;
mod try_read_lock;
mod try_spin_lock;
mod try_spin_lock_async;
mod try_write_lock;
mod unlock;
mod work;
mod write;
mod write_lock;

use lockcore::{Call, LockKind, Millis};
use serde::{Deserialize, Serialize};

use crate::model::script::{Emit, Instr};
use crate::model::validate::lease_out_of_range;

/// A field a kind refuses, and why (with the accepted range).
pub(crate) type Invalid = (&'static str, String);

/// What every kind provides: a lock call (`call`), or other instructions
/// (`emit`). The registry's test fails for a kind that gives neither.
pub(crate) trait Kind {
    /// The lock call it makes, if it makes one.
    fn call(&self) -> Option<Call> {
        None
    }

    /// Appends what the thread runs for it: its call, by default (a
    /// failed acquire's skip is patched by the compiler).
    fn emit(&self, out: &mut Emit) {
        if let Some(call) = self.call() {
            out.push(Instr::call(call));
        }
    }

    /// Which object of the thread's lock it acquires (`None`: it
    /// acquires nothing). A thread's acquires all name one object; its
    /// unlock and force-unlock steps act on that object.
    fn object(&self) -> Option<LockKind> {
        self.call().filter(Call::is_acquire).map(|_| LockKind::Lock)
    }

    /// Its own fields' rules. Steps inside it are checked by the
    /// validator, which knows their place.
    fn check(&self) -> Result<(), Invalid> {
        Ok(())
    }

    /// The steps it runs inside it (a repeat's body).
    fn body(&self) -> &[Step] {
        &[]
    }

    /// Its body, to rewrite (the swarm's async and blocking forms).
    fn body_mut(&mut self) -> Option<&mut Vec<Step>> {
        None
    }

    /// How many instructions `emit` makes.
    fn instructions(&self) -> usize {
        1
    }

    /// How many instructions it executes at most, saturating.
    fn expanded_len(&self) -> u64 {
        1
    }
}

/// `ms` as lockcore's lease or wait.
fn millis(ms: Option<u64>) -> Option<Millis> {
    ms.map(Millis)
}

/// The lease's rule, shared by every acquiring kind.
fn lease(lease_ms: Option<u64>) -> Result<(), Invalid> {
    wait_or_lease("lease_ms", lease_ms)
}

/// A wait's or lease's rule: at least 1 ms, within Redis's expiry range.
fn wait_or_lease(field: &'static str, ms: Option<u64>) -> Result<(), Invalid> {
    match ms.and_then(|ms| lease_out_of_range(ms, 1)) {
        Some(reason) => Err((field, reason)),
        None => Ok(()),
    }
}

/// A work's or sleep's rule: at most a day.
fn duration(ms: u64) -> Result<(), Invalid> {
    if ms > crate::MAX_HORIZON_MS {
        let max = crate::MAX_HORIZON_MS;
        return Err(("ms", format!("must be at most {max} ms (a day), got {ms}")));
    }
    Ok(())
}

/// Declares the kinds: the `Step` enum (serde tag `step`, each kind by
/// its scenario-file name), its dispatch, the names and `sim::steps`.
macro_rules! steps {
    ($($(#[$doc:meta])* $variant:ident = $name:literal ($module:ident::$ty:ident),)*) => {
        /// One step of a thread's script.
        ///
        /// A `try-lock` that fails skips the rest of the enclosing block (the
        /// script, or the current round of a `repeat`), as the documents' Java
        /// does with `if (res) { ... }`. A `lock` or `try-lock` whose call fails
        /// with an error (lockcore gave up on the network, an invalid lease) skips
        /// the same way, as the exception would.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
        #[serde(tag = "step")]
        pub enum Step {
            $($(#[$doc])* #[serde(rename = $name)] $variant($module::$ty),)*
        }

        impl Step {
            pub(crate) fn kind(&self) -> &dyn Kind {
                match self {
                    $(Step::$variant(k) => k,)*
                }
            }

            pub(crate) fn kind_mut(&mut self) -> &mut dyn Kind {
                match self {
                    $(Step::$variant(k) => k,)*
                }
            }

            /// Its name in a scenario file: `try-lock`.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Step::$variant(_) => $name,)*
                }
            }
        }

        /// Every kind's name, in registration order.
        #[cfg(test)]
        pub(crate) const NAMES: &[&str] = &[$($name,)*];

        /// One step of each kind with its fields' defaults, in
        /// registration order: the registry's checks run every kind, and
        /// [`Step::on_object`] finds a kind's forms in it.
        pub(crate) fn examples() -> Vec<Step> {
            vec![$(Step::$variant($module::$ty::default()),)*]
        }

        /// The data of each step kind, one struct per kind ([`Step`]'s
        /// variants), as `sim::steps` exports them.
        pub mod kinds {
            $(pub use super::$module::$ty;)*
        }
    };
}

steps! {
    /// `lock()` or `lock(lease)`: waits as long as it takes.
    Lock = "lock" (lock::Lock),
    /// `lockInterruptibly()` or `lockInterruptibly(lease)`: like `lock`,
    /// but an `interrupt` fault ends it wherever it waits.
    LockInterruptibly = "lock-interruptibly" (lock_interruptibly::LockInterruptibly),
    /// `tryLock()`, `tryLock(wait)` or `tryLock(wait, lease)`.
    TryLock = "try-lock" (try_lock::TryLock),
    /// `lockAsync()` or `lockAsync(lease)`: like `lock`, but the wait for
    /// a held lock is a listener on the lock's channel, not the latch, and
    /// an `interrupt` does not reach it.
    LockAsync = "lock-async" (lock_async::LockAsync),
    /// `tryLockAsync()`, `tryLockAsync(wait)` or `tryLockAsync(wait,
    /// lease)`: `try-lock` waiting by a listener, as `lock-async` does.
    TryLockAsync = "try-lock-async" (try_lock_async::TryLockAsync),
    /// Work: the thread is busy for this long in virtual time. As in the
    /// documents' experiments (where `Thread.sleep` stands for the work), a
    /// pause does not add to it: work due to end during a stop-the-world
    /// pause or starvation ends when the process runs again.
    Work = "work" (work::Work),
    /// A write to the protected resource, with the thread's fencing token
    /// when it has one.
    Write = "write" (write::Write),
    /// `unlock()`.
    Unlock = "unlock" (unlock::Unlock),
    /// `forceUnlock()`.
    ForceUnlock = "force-unlock" (force_unlock::ForceUnlock),
    /// `Thread.sleep`.
    Sleep = "sleep" (sleep::Sleep),
    /// Runs `steps` `times` times.
    Repeat = "repeat" (repeat::Repeat),
    /// `readWriteLock.readLock().lock()` or `lock(lease)`: shared with
    /// other readers, excluded by a writer of another thread.
    ReadLock = "read-lock" (read_lock::ReadLock),
    /// `readWriteLock.readLock().tryLock(...)`.
    TryReadLock = "try-read-lock" (try_read_lock::TryReadLock),
    /// `readWriteLock.writeLock().lock()` or `lock(lease)`: excludes
    /// every other reader and writer.
    WriteLock = "write-lock" (write_lock::WriteLock),
    /// `readWriteLock.writeLock().tryLock(...)`.
    TryWriteLock = "try-write-lock" (try_write_lock::TryWriteLock),
    /// `fairLock.lock()` or `lock(lease)`: waits its turn in the queue.
    FairLock = "fair-lock" (fair_lock::FairLock),
    /// `fairLock.tryLock(...)`.
    TryFairLock = "try-fair-lock" (try_fair_lock::TryFairLock),
    /// `fencedLock.lock()` or `lock(lease)` of Redisson's `RFencedLock`
    /// (not the `fenced` profile): `RLock`'s, taking a token it does not
    /// return.
    FencedLock = "fenced-lock" (fenced_lock::FencedLock),
    /// `fencedLock.tryLock(...)`.
    TryFencedLock = "try-fenced-lock" (try_fenced_lock::TryFencedLock),
    /// `fencedLock.lockAndGetToken(...)`: waits as long as it takes and
    /// returns the token.
    FencedLockAndGetToken = "fenced-lock-and-get-token" (fenced_lock_and_get_token::FencedLockAndGetToken),
    /// `fencedLock.tryLockAndGetToken(...)`: the token, or null when the
    /// wait is spent.
    TryFencedLockAndGetToken = "try-fenced-lock-and-get-token" (try_fenced_lock_and_get_token::TryFencedLockAndGetToken),
    /// `spinLock.lock()` or `lock(lease)`: attempts again after each
    /// back-off sleep, no pub/sub.
    SpinLock = "spin-lock" (spin_lock::SpinLock),
    /// `spinLock.tryLock(...)`.
    TrySpinLock = "try-spin-lock" (try_spin_lock::TrySpinLock),
    /// `spinLock.lockInterruptibly(...)`.
    SpinLockInterruptibly = "spin-lock-interruptibly" (spin_lock_interruptibly::SpinLockInterruptibly),
    /// `spinLock.lockAsync(...)`: its sleeps are timer tasks.
    SpinLockAsync = "spin-lock-async" (spin_lock_async::SpinLockAsync),
    /// `spinLock.tryLockAsync(...)`.
    TrySpinLockAsync = "try-spin-lock-async" (try_spin_lock_async::TrySpinLockAsync),
}

/// The objects the acquires of `steps` (and of the steps inside them)
/// name, in order of first appearance.
pub(crate) fn objects(steps: &[Step], out: &mut Vec<LockKind>) {
    for step in steps {
        if let Some(kind) = step.kind().object()
            && !out.contains(&kind)
        {
            out.push(kind);
        }
        objects(step.kind().body(), out);
    }
}

impl Step {
    /// Whether it takes the lock (`lock`, `lock-interruptibly`, `try-lock`,
    /// `lock-async`, `try-lock-async`).
    pub fn is_acquire(&self) -> bool {
        self.kind().call().is_some_and(|c| c.is_acquire())
    }

    /// The explicit lease of an acquiring step.
    pub fn lease_ms(&self) -> Option<u64> {
        self.kind().call().and_then(|c| c.lease()).map(|m| m.0)
    }

    /// The steps it runs inside it (a repeat's body; empty for others).
    pub fn body(&self) -> &[Step] {
        self.kind().body()
    }

    /// This acquire as the same call on `kind`'s object (`lock` as
    /// `read-lock`, `try-lock-async` as `try-read-lock` with `async`), with
    /// its fields: the first registered kind whose object is `kind` and
    /// whose call, as it is or with `async = true`, has this one's form.
    /// `None` when it is no acquire, or no registered kind has its form on
    /// `kind` (there is no `lock-interruptibly` of a read lock). Found in
    /// the registration, so a new lock kind's steps need no line here.
    pub(crate) fn on_object(&self, kind: LockKind) -> Option<Step> {
        let form = std::mem::discriminant(&self.kind().call().filter(Call::is_acquire)?);
        let mut fields = serde_json::to_value(self).ok()?;
        // The form is in the call, not in `async`: an async step of a kind
        // without the field (`lock-async`) moves to one with it, and back.
        // Its own value is tried first, so a step whose call is one form
        // either way (`fenced-lock-and-get-token`) keeps it.
        let own = fields.as_object_mut()?.remove("async") == Some(true.into());
        let targets = examples()
            .into_iter()
            .filter(|e| e.kind().object() == Some(kind));
        targets
            .flat_map(|target| [own, !own].map(|is_async| (target.name(), is_async)))
            .find_map(|(name, is_async)| {
                // The forms share their fields (`wait_ms`, `lease_ms`); a
                // kind whose fields differ, or that has no `async`, fails
                // to read them and is not used.
                let mut fields = fields.clone();
                let map = fields.as_object_mut()?;
                map.insert("step".to_owned(), name.into());
                if is_async {
                    map.insert("async".to_owned(), true.into());
                }
                let step: Step = serde_json::from_value(fields).ok()?;
                let call = step.kind().call()?;
                (std::mem::discriminant(&call) == form).then_some(step)
            })
    }
}

#[cfg(test)]
mod tests;
