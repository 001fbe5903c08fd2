//! Which Redisson lock object a call is on: the lock-type dimension.
//!
//! Redisson's lock family shares `RedissonLock`'s waiting loop, unlock
//! latch and renewal outcomes, and differs in its keys, channel and
//! scripts. A [`LockKind`] names the object (`RLock`, the read or the
//! write lock of an `RReadWriteLock`, ...); the [`LockName`] of a call
//! carries it, so every map the machine keeps by lock (holds, renewal
//! entries, fences) tells a thread's read hold of `K` from its write hold
//! of `K` without a second key.
//!
//! A kind is one file here: its [`KindInfo`] (name, Redisson class,
//! channel prefix) and its [`LockType`] impl (the scripts it sends), plus
//! one line in [`kinds!`]. The machine asks the kind through
//! [`LockKind`]'s dispatching methods, never by matching on it, so adding
//! a kind adds no branch elsewhere.
//!
//! [`LockName`]: crate::LockName

mod fair;
pub use fair::fair_thread_wait;
mod fenced;
mod read;
mod rlock;
mod rw;
mod spin;
mod write;

pub(crate) use rw::READ_UNLOCK_MESSAGE;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::Millis;
use crate::machine::{Command, LockWords};
use crate::release::SwitchReads;

/// What one kind is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindInfo {
    /// The name in scenario files and on the command line.
    pub name: &'static str,
    /// The Redisson class that implements it.
    pub class: &'static str,
    /// The pub/sub channel's prefix (Redisson's `getChannelName`, before
    /// `:{K}`).
    pub channel_prefix: &'static str,
    /// What its `getLockName(threadId)` adds to `<uuid>:<thread-id>` (the
    /// write lock's `:write`).
    pub hash_field_suffix: &'static str,
}

/// The words of one lock call a kind's script is built from.
pub(crate) struct Words<'a> {
    /// The release's switches (each read is noted).
    pub(crate) switches: &'a SwitchReads,
    /// The lock's key words.
    pub(crate) lock: &'a LockWords,
    /// The thread's `<uuid>:<thread-id>` (before the kind's suffix).
    pub(crate) thread_field: Bytes,
    /// The lease ms the script arms.
    pub(crate) lease: Bytes,
    /// The client's clock (`System.currentTimeMillis()`), which the fair
    /// lock's scripts take as an argument.
    pub(crate) now: Millis,
    /// How the call waits (an acquire's; [`Waits::Unbounded`] otherwise).
    pub(crate) waits: Waits,
    /// The client's fair-lock `threadWaitTime`, if set (else the
    /// release's).
    pub(crate) thread_wait: Option<Millis>,
}

/// How an acquire waits, as a kind's scripts read it: the fair lock's
/// `tryLock()` sends a script of its own, and its `tryLock(wait)` puts the
/// wait in the deadlines it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waits {
    /// `tryLock()`: one attempt.
    Once,
    /// `tryLock(wait, ...)`.
    For(Millis),
    /// `lock(...)`, and every call that is not an acquire.
    Unbounded,
}

/// The scripts one kind sends. Each returns the complete `EVAL` command;
/// replies are read as `RLock`'s are (acquire: nil or the holder's PTTL;
/// unlock: nil, 0 or 1; renew: 0 or 1; force unlock: 0 or 1).
pub(crate) trait LockType {
    /// Its name, class and channel.
    const INFO: KindInfo;
    /// `tryLockInnerAsync`.
    fn acquire(w: &Words<'_>) -> Command;
    /// The acquire of the token-returning methods (`RFencedLock`'s
    /// `lockAndGetToken` / `tryLockAndGetToken`): `None` for a kind that
    /// has none.
    fn acquire_token(_: &Words<'_>) -> Option<Command> {
        None
    }
    /// The key `getToken()` reads: `None` for a kind without one.
    fn token_key(_: &LockWords) -> Option<Bytes> {
        None
    }
    /// `unlockInnerAsync`, with the call's latch key and TTL from 3.24.
    fn unlock(w: &Words<'_>, latch: Option<(&str, Bytes)>) -> Command;
    /// `forceUnlockAsync`.
    fn force_unlock(w: &Words<'_>) -> Command;
    /// `renewExpirationAsync` for one thread (the per-lock eras).
    fn renew(w: &Words<'_>) -> Command;
    /// `acquireFailedAsync`, sent when a `tryLock(wait)` gives up: `None`
    /// for a kind whose override is empty (`RLock`'s).
    fn acquire_failed(_: &Words<'_>) -> Option<Command> {
        None
    }
    /// Whether each waiting thread subscribes to a channel of its own,
    /// `<channel>:<uuid>:<tid>` (the fair lock's `subscribe(threadId)`),
    /// rather than to the lock's.
    fn waits_on_own_channel() -> bool {
        false
    }
    /// Whether a waiter sleeps its back-off and attempts again rather
    /// than subscribing (the spin lock's polling, no pub/sub).
    fn polls() -> bool {
        false
    }
    /// Whether the acquire is inside the 3.20.1 retry wrapper
    /// (`ServiceManager.execute`): a rolled-back acquire is tried again,
    /// and an interrupt reaches the wrapper's future, not the acquire's.
    fn acquire_retried() -> bool {
        true
    }
    /// Whether the machine models this kind's acquire under the release
    /// (`None`), or why not (a refusal's text); `watchdog`: the acquire
    /// has no lease, so the release's renewal would keep it.
    fn unmodelled(switches: &SwitchReads, watchdog: bool) -> Option<&'static str>;
    /// The oldest release whose code the machine models for this kind,
    /// and the refusal's text before it: `None` for every release. No
    /// switch tells the releases before the first one (3.8.1) apart, so
    /// a floor below it is a version, not a switch.
    fn oldest() -> Option<(crate::Version, &'static str)> {
        None
    }
}

macro_rules! kinds {
    ($($variant:ident => $module:ident :: $ty:ident,)*) => {
        /// The Redisson lock object a call is on.
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize,
            Deserialize,
        )]
        #[serde(try_from = "String", into = "&'static str")]
        pub enum LockKind {
            $(
                #[allow(missing_docs)]
                $variant,
            )*
        }

        impl LockKind {
            /// Every kind, `RLock` first.
            pub const ALL: &'static [LockKind] = &[$(LockKind::$variant,)*];

            /// Its name, class and channel.
            pub fn info(self) -> &'static KindInfo {
                match self {
                    $(LockKind::$variant => &<$module::$ty as LockType>::INFO,)*
                }
            }

            pub(crate) fn acquire(self, w: &Words<'_>) -> Command {
                match self {
                    $(LockKind::$variant => $module::$ty::acquire(w),)*
                }
            }

            pub(crate) fn acquire_token(self, w: &Words<'_>) -> Option<Command> {
                match self {
                    $(LockKind::$variant => $module::$ty::acquire_token(w),)*
                }
            }

            pub(crate) fn token_key(self, lock: &LockWords) -> Option<Bytes> {
                match self {
                    $(LockKind::$variant => $module::$ty::token_key(lock),)*
                }
            }

            pub(crate) fn unlock(self, w: &Words<'_>, latch: Option<(&str, Bytes)>) -> Command {
                match self {
                    $(LockKind::$variant => $module::$ty::unlock(w, latch),)*
                }
            }

            pub(crate) fn force_unlock(self, w: &Words<'_>) -> Command {
                match self {
                    $(LockKind::$variant => $module::$ty::force_unlock(w),)*
                }
            }

            pub(crate) fn renew(self, w: &Words<'_>) -> Command {
                match self {
                    $(LockKind::$variant => $module::$ty::renew(w),)*
                }
            }

            pub(crate) fn acquire_failed(self, w: &Words<'_>) -> Option<Command> {
                match self {
                    $(LockKind::$variant => $module::$ty::acquire_failed(w),)*
                }
            }

            pub(crate) fn waits_on_own_channel(self) -> bool {
                match self {
                    $(LockKind::$variant => $module::$ty::waits_on_own_channel(),)*
                }
            }

            pub(crate) fn polls(self) -> bool {
                match self {
                    $(LockKind::$variant => $module::$ty::polls(),)*
                }
            }

            /// Whether this kind's acquire is inside the 3.20.1 retry
            /// wrapper (`ServiceManager.execute`): a rolled-back acquire
            /// is tried again, and an interrupt reaches the wrapper's
            /// future, not the acquire's (a spin lock's is outside it in
            /// every release).
            pub fn acquire_retried(self) -> bool {
                match self {
                    $(LockKind::$variant => $module::$ty::acquire_retried(),)*
                }
            }

            fn oldest(self) -> Option<(crate::Version, &'static str)> {
                match self {
                    $(LockKind::$variant => $module::$ty::oldest(),)*
                }
            }

            pub(crate) fn unmodelled(
                self,
                switches: &SwitchReads,
                watchdog: bool,
            ) -> Option<&'static str> {
                match self {
                    $(LockKind::$variant => $module::$ty::unmodelled(switches, watchdog),)*
                }
            }
        }
    };
}

kinds! {
    Lock => rlock::RLockType,
    Read => read::ReadLock,
    Write => write::WriteLock,
    Fair => fair::FairLock,
    Fenced => fenced::FencedLock,
    Spin => spin::SpinLock,
}

impl LockKind {
    /// The name in files (`rlock`, `read`, `write`, `fair`, `fenced-lock`,
    /// `spin`).
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The thread's hash field under this kind: `<uuid>:<tid>` plus the
    /// kind's suffix (the write lock's `getLockName` adds `:write`).
    pub(crate) fn field(self, thread_field: &Bytes) -> Bytes {
        let suffix = self.info().hash_field_suffix;
        if suffix.is_empty() {
            return thread_field.clone();
        }
        let mut f = Vec::with_capacity(thread_field.len() + suffix.len());
        f.extend_from_slice(thread_field);
        f.extend_from_slice(suffix.as_bytes());
        Bytes::from(f)
    }
}

impl LockKind {
    /// Why the machine refuses this kind's acquire under `release`
    /// ([`crate::LockError::Unmodelled`]'s text), if it does; `watchdog`:
    /// the acquire has no lease. A generator asks it before drawing the
    /// kind, so a drawn scenario never runs into the refusal.
    pub fn refusal(self, release: crate::Release, watchdog: bool) -> Option<&'static str> {
        self.too_old(release)
            .or_else(|| self.unmodelled(&SwitchReads::new(release.switches()), watchdog))
    }

    /// Why the machine refuses this kind under `release` for its age
    /// alone (the release runs code older than the kind's oldest
    /// modelled release, 2.x read as the 3.x it runs).
    pub(crate) fn too_old(self, release: crate::Release) -> Option<&'static str> {
        let (oldest, why) = self.oldest()?;
        (release.base_version().lock_code() < oldest).then_some(why)
    }
}

impl Default for LockKind {
    /// `RLock`: what a call names when it names no kind.
    fn default() -> Self {
        LockKind::Lock
    }
}

impl std::fmt::Display for LockKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl From<LockKind> for &'static str {
    fn from(kind: LockKind) -> Self {
        kind.name()
    }
}

impl TryFrom<String> for LockKind {
    type Error = crate::LockError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl std::str::FromStr for LockKind {
    type Err = crate::LockError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LockKind::ALL
            .iter()
            .copied()
            .find(|k| k.name() == s)
            .ok_or_else(|| crate::LockError::UnknownLockKind(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every registered kind round-trips its name, and the names are
    /// distinct (a scenario file names a kind by it).
    #[test]
    fn every_kind_round_trips_its_name() {
        for &kind in LockKind::ALL {
            assert_eq!(kind.name().parse::<LockKind>(), Ok(kind));
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.name()));
        }
        assert_eq!(LockKind::default(), LockKind::Lock);
        assert!("spinning".parse::<LockKind>().is_err());
    }
}
