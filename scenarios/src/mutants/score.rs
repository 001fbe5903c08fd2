//! What the sweep found of each mutant, and the score over all of them.

use std::collections::BTreeMap;

use serde::Serialize;

use super::Mutant;
use super::probe::Seen;
use super::witness::{Witness, witness};

/// What became of one mutant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", content = "reason", rename_all = "kebab-case")]
pub enum MutantVerdict {
    /// A run showed a defect attributed to the removed fix.
    Killed,
    /// Removing the fix changes nothing the model shows, and why.
    Equivalent(String),
    /// Runs changed, but none showed a defect attributed to the fix: what
    /// they showed.
    Survived(String),
}

impl MutantVerdict {
    /// `killed`, `equivalent` or `survived`.
    pub fn name(&self) -> &'static str {
        match self {
            MutantVerdict::Killed => "killed",
            MutantVerdict::Equivalent(_) => "equivalent",
            MutantVerdict::Survived(_) => "survived",
        }
    }
}

/// One mutant's tallies over the seeds it was explored on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MutantScore {
    /// The removed switch (`--without` it).
    pub switch: String,
    /// Its upstream issue.
    pub upstream: String,
    /// The release that brought it.
    pub since: String,
    /// Killed, equivalent or survived, with the reason.
    #[serde(flatten)]
    pub verdict: MutantVerdict,
    /// The first seed whose run killed it.
    pub first_kill: Option<u64>,
    /// How many seeds, from the range's first, up to and including the
    /// first kill.
    pub seeds_to_kill: Option<u64>,
    /// How many runs killed it.
    pub killing_runs: u64,
    /// How many seeds it was explored on (fewer than the range's with
    /// `--first`, which stops at the first kill).
    pub seeds: u64,
    /// How many of those runs asked about the switch.
    pub reached: u64,
    /// How many runs the removal changed.
    pub changed: u64,
    /// How many changed runs showed a defect the release's run lacks,
    /// attributed to something other than the fix.
    pub other_defect_runs: u64,
    /// Those defects' attributions, with their runs.
    pub others: BTreeMap<String, u64>,
    /// The command that replays the first kill.
    pub replay: Option<String>,
    /// The fix's history scenario under the mutant, for a mutant not
    /// killed (`None` when killed, inert, or the fix has none).
    pub witness: Option<Witness>,
    /// The mutant, for the verdict at the end.
    #[serde(skip)]
    pub(super) mutant: Mutant,
    /// Whether it is explored no further (`--first` after a kill).
    #[serde(skip)]
    pub(super) done: bool,
}

impl MutantScore {
    pub(super) fn new(mutant: Mutant) -> MutantScore {
        let info = mutant.switch.info();
        MutantScore {
            switch: info.name.to_owned(),
            upstream: info.upstream.to_owned(),
            since: info.since.map_or("locksim".to_owned(), |v| v.to_string()),
            verdict: match mutant.inert() {
                Some(reason) => MutantVerdict::Equivalent(reason),
                None => MutantVerdict::Survived(String::new()),
            },
            first_kill: None,
            seeds_to_kill: None,
            killing_runs: 0,
            seeds: 0,
            reached: 0,
            changed: 0,
            other_defect_runs: 0,
            others: BTreeMap::new(),
            replay: None,
            witness: None,
            mutant,
            done: mutant.inert().is_some(),
        }
    }

    /// Counts what seed `seed` (the `nth` of the range, from 1, drawn by
    /// `strategy`) showed of it; with `first`, a kill ends its count.
    pub(super) fn add(
        &mut self,
        seed: u64,
        nth: u64,
        seen: &Seen,
        (first, strategy): (bool, sim::Strategy),
    ) {
        if self.done {
            return;
        }
        self.seeds += 1;
        let Seen::Changed { kill, others } = seen else {
            self.reached += u64::from(*seen == Seen::Same);
            return;
        };
        self.reached += 1;
        self.changed += 1;
        if !others.is_empty() {
            self.other_defect_runs += 1;
            for o in others {
                *self.others.entry(o.clone()).or_insert(0) += 1;
            }
        }
        if *kill {
            self.killing_runs += 1;
            if self.first_kill.is_none() {
                self.first_kill = Some(seed);
                self.seeds_to_kill = Some(nth);
                self.replay = Some(self.mutant.replay(seed, strategy));
                self.verdict = MutantVerdict::Killed;
            }
            self.done = first;
        }
    }

    /// Settles the verdict of a mutant not killed, from its history
    /// scenario under the mutant and what its explored runs did.
    pub(super) fn settle(&mut self) {
        if !matches!(self.verdict, MutantVerdict::Survived(_)) {
            return;
        }
        self.witness = witness(self.mutant);
        let runs = self.runs();
        self.verdict = match &self.witness {
            Some(w) if w.breaks => MutantVerdict::Survived(format!(
                "history scenario {} breaks under it, no explored run did; {runs}",
                w.scenario
            )),
            // Not equivalent on this evidence alone: the history scenario
            // aims at one window of the affected release's timing, and a
            // race it misses may still be reachable (#6472's round,
            // unreached in 200 seeds with its scenario holding, is killed
            // in every 100,000-seed range).
            Some(w) => MutantVerdict::Survived(format!(
                "history scenario {} holds under it; {runs}",
                w.scenario
            )),
            None => MutantVerdict::Survived(format!("no history scenario; {runs}")),
        };
    }

    /// What its explored runs did, in a few words.
    fn runs(&self) -> String {
        if self.reached == 0 {
            return format!("no run of {} seeds asked about it", self.seeds);
        }
        if self.changed == 0 {
            return format!("{} asked about it, none changed", runs(self.reached));
        }
        if self.others.is_empty() {
            return format!("{} changed, none with a new defect", runs(self.changed));
        }
        let named: Vec<String> = self
            .others
            .iter()
            .map(|(label, n)| format!("{label} x{n}"))
            .collect();
        format!(
            "{} changed, with other defects: {}",
            runs(self.changed),
            named.join(", ")
        )
    }
}

/// `1 run`, `2 runs`.
fn runs(n: u64) -> String {
    format!("{n} run{}", if n == 1 { "" } else { "s" })
}

/// A release's mutation score over a seed range.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MutationReport {
    /// The release whose fixes were removed.
    pub release: String,
    /// The seeds asked for (`from..end`).
    pub seeds: String,
    /// The first seed not explored: the range's end unless interrupted.
    pub next: u64,
    /// Whether the sweep was stopped before the range's end.
    pub interrupted: bool,
    /// Seeds whose run under the release could not be made (a bug in
    /// sim's generator).
    pub failed: u64,
    /// Why the first of them could not.
    pub first_failure: Option<String>,
    /// Each mutant, in the registry's order.
    pub mutants: Vec<MutantScore>,
    /// How many were killed.
    pub killed: usize,
    /// How many are equivalent.
    pub equivalent: usize,
    /// How many survived.
    pub survived: usize,
    /// Killed over all mutants (0 when there are none).
    pub score: f64,
    /// Killed over the mutants not equivalent.
    pub score_of_killable: f64,
}

impl MutationReport {
    pub(super) fn tally(&mut self) {
        for m in &mut self.mutants {
            m.settle();
        }
        let count = |name: &str| {
            self.mutants
                .iter()
                .filter(|m| m.verdict.name() == name)
                .count()
        };
        (self.killed, self.equivalent, self.survived) =
            (count("killed"), count("equivalent"), count("survived"));
        let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        self.score = ratio(self.killed, self.mutants.len());
        self.score_of_killable = ratio(self.killed, self.killed + self.survived);
    }
}
