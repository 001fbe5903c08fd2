//! A fair-lock queue entry (or another family key) left behind, and the
//! one fault that explains it: the crash of the client whose thread it
//! names, which died before it could take the lock or remove itself.
//! Nothing else does. A reply held back past the response timeout is
//! Redisson's to handle: from 4.7.0 `tryLock` sends `acquireFailed` when
//! an attempt inside its wait loop times out (#5019), so the same fault
//! leaving the entry under 4.6.x is the defect that fix removes.

use crate::model::history::RecordKind;
use crate::{Fault, History, SimSpec, SimTime, Violation};

/// The crash fault of a process a leftover key of `v` names, with the
/// words that say so.
pub(super) fn crashed_owner<'s>(
    spec: &'s SimSpec,
    history: &History,
    v: &Violation,
) -> Option<(String, &'s Fault)> {
    let entries = v
        .events
        .iter()
        .filter_map(|&i| history.records.get(i))
        .find_map(|r| match &r.kind {
            RecordKind::Leftover { entries, .. } => Some(entries),
            _ => None,
        })?;
    history.records.iter().find_map(|r| {
        let RecordKind::Crash { process } = &r.kind else {
            return None;
        };
        let named = entries
            .iter()
            .find(|w| w.client == process.client && w.life == process.life)?;
        // The hosted engines record a crash a little after its instant.
        let fault = spec
            .faults
            .0
            .iter()
            .filter(|f| matches!(f, Fault::Crash(c) if *c.client == *process.client))
            .filter(|f| f.at_ms() <= r.at.as_ms())
            .max_by_key(|f| f.at_ms())?;
        let why = format!(
            "{named}'s client crashed at {} with its entry queued ({})",
            SimTime::from_ms(fault.at_ms()),
            fault.text()
        );
        Some((why, fault))
    })
}
