//! What an engine hands over when a run ends: the judge's input.

use lockcore::SwitchSet;

use crate::{CutShort, History};

/// What an engine hands over when a run ends, to be judged.
pub(crate) struct Ended {
    pub(crate) history: History,
    pub(crate) cut_short: Vec<CutShort>,
    pub(crate) events: u64,
    pub(crate) commands: u64,
    pub(crate) switches_read: SwitchSet,
    /// The places of the lock its clients passed (coverage).
    pub(crate) reached: lockcore::Reached,
    /// When each place of `reached` was first passed (the fast engine's
    /// alone), in the order they were.
    pub(crate) first_reached: Vec<(lockcore::Sometimes, crate::SimTime)>,
}

impl Ended {
    /// A run of an engine that cannot tell which switches its clients
    /// read (the hosted engines): every switch counts as read.
    pub(crate) fn hosted(history: History, cut_short: Vec<CutShort>, events: u64) -> Ended {
        Ended {
            history,
            cut_short,
            events,
            commands: 0,
            switches_read: SwitchSet::all(),
            // The hosted engines drive lockcore's async client, which
            // does not hand its machine's places out: their runs are
            // covered by their histories alone.
            reached: lockcore::Reached::EMPTY,
            first_reached: Vec::new(),
        }
    }
}
