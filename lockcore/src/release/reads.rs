//! The switches a client read: which of its release's switches its
//! behaviour has depended on so far.
//!
//! A deterministic run that never asked about a switch is the same run,
//! byte for byte, under a release that differs only in that switch. So
//! explore's attribution, which runs a defect again under the release plus
//! each later fix, can skip a fix the run never read: the answer is known.

use std::cell::Cell;

use super::{Era, Switch, SwitchSet};

/// A release's switches as a client asks about them, noting each one
/// asked ([`SwitchReads::read`]).
#[derive(Debug, Clone)]
pub(crate) struct SwitchReads {
    set: SwitchSet,
    read: Cell<SwitchSet>,
}

impl SwitchReads {
    /// The switches of `set`, none read yet.
    pub(crate) fn new(set: SwitchSet) -> Self {
        SwitchReads {
            set,
            read: Cell::new(SwitchSet::EMPTY),
        }
    }

    /// Whether `switch` is in force; notes that it was asked.
    pub(crate) fn has(&self, switch: Switch) -> bool {
        self.read.set(self.read.get().with(switch));
        self.set.has(switch)
    }

    /// The renewal bookkeeping in force, asking only the switches that
    /// decide it.
    pub(crate) fn bookkeeping(&self) -> Era {
        Era::of(|s| self.has(s))
    }

    /// Every switch asked so far.
    pub(crate) fn read(&self) -> SwitchSet {
        self.read.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Release;

    /// Only the switches asked are noted, whether on or off; the
    /// bookkeeping asks no more than it needs.
    #[test]
    fn notes_each_switch_asked() {
        let reads = SwitchReads::new(Release::REDISSON.switches());
        assert!(!reads.has(Switch::UnlockLatch));
        assert!(reads.has(Switch::LockScriptBatch));
        assert_eq!(
            reads.read(),
            SwitchSet::EMPTY
                .with(Switch::UnlockLatch)
                .with(Switch::LockScriptBatch)
        );
        let reads = SwitchReads::new(Release::FENCED.switches());
        assert_eq!(reads.bookkeeping(), Era::Fenced);
        assert_eq!(reads.read(), SwitchSet::EMPTY.with(Switch::Fencing));
        let reads = SwitchReads::new(Release::LEGACY.switches());
        assert_eq!(reads.bookkeeping(), Era::RedissonLegacy);
        assert_eq!(reads.read().iter().count(), 3);
    }
}
