//! Which faults touched a client (or Redis) during a span of time: the
//! checkers that exempt faulted runs ask it, each question one binary
//! search.

use std::collections::BTreeMap;

use crate::judge::check::work::Count;
use crate::model::history::{Phase, RecordKind};
use crate::{Fault, History, SimTime};

/// Fault windows per client, and those on Redis (`None`).
pub(crate) struct FaultIndex<'h> {
    windows: BTreeMap<Option<&'h str>, Windows>,
}

impl<'h> FaultIndex<'h> {
    /// One pass over the history's fault records, keeping only the
    /// faults that excuse a loss: not the application's own scheduling
    /// (`interleave`, `interrupt`).
    pub(crate) fn excusing(history: &'h History, work: &impl Count) -> FaultIndex<'h> {
        Self::of(history, work, |f| f.kind().excuses())
    }

    /// [`Self::excusing`] less the faults on replicas alone: those that
    /// may hold a command no replica answers (a client's server probe,
    /// `WAIT 0 0`).
    pub(crate) fn holding_replies(history: &'h History, work: &impl Count) -> FaultIndex<'h> {
        Self::of(history, work, |f| {
            f.kind().excuses() && f.kind().holds_replies()
        })
    }

    fn of(
        history: &'h History,
        work: &impl Count,
        keep: impl Fn(&Fault) -> bool,
    ) -> FaultIndex<'h> {
        let mut windows: BTreeMap<Option<&'h str>, Windows> = BTreeMap::new();
        for (_, r) in work.records(history) {
            if let RecordKind::Fault {
                fault,
                phase: Phase::Begin,
            } = &r.kind
                && keep(fault)
            {
                let begin = SimTime::from_ms(fault.at_ms());
                let end = fault.end_ms().map_or(begin, SimTime::from_ms);
                windows.entry(fault.client()).or_default().push(begin, end);
            }
        }
        for w in windows.values_mut() {
            w.finish();
        }
        FaultIndex { windows }
    }

    /// Whether a fault touched `client` or Redis in `[start, until]` (a
    /// window open at `start` counts).
    pub(crate) fn touched(
        &self,
        client: &str,
        start: SimTime,
        until: SimTime,
        work: &impl Count,
    ) -> bool {
        [Some(client), None].into_iter().any(|k| {
            self.windows
                .get(&k)
                .is_some_and(|w| w.overlaps(start, until, work))
        })
    }
}

/// Fault windows `[begin, end]` sorted by begin, with the latest end so
/// far, so "does any window overlap `[start, until]`" is one search.
#[derive(Default)]
struct Windows {
    windows: Vec<(SimTime, SimTime)>,
    max_end: Vec<SimTime>,
}

impl Windows {
    fn push(&mut self, begin: SimTime, end: SimTime) {
        self.windows.push((begin, end));
    }

    fn finish(&mut self) {
        self.windows.sort();
        let mut latest = SimTime::ZERO;
        self.max_end = self
            .windows
            .iter()
            .map(|&(_, end)| {
                latest = latest.max(end);
                latest
            })
            .collect();
    }

    fn overlaps(&self, start: SimTime, until: SimTime, work: &impl Count) -> bool {
        work.search(self.windows.len());
        let n = self.windows.partition_point(|&(begin, _)| begin <= until);
        n > 0 && self.max_end[n - 1] >= start
    }
}
