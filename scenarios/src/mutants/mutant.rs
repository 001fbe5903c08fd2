//! Which fixes a release has, each removed alone as a mutant.

use lockcore::{Release, Switch};

/// A release with one of its fixes removed (`--without SWITCH`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mutant {
    /// The release the fix is removed from.
    pub release: Release,
    /// The fix removed.
    pub switch: Switch,
}

impl Mutant {
    /// The release the mutant runs: [`Mutant::release`] without the fix.
    pub fn mutated(self) -> Release {
        self.release.without(self.switch)
    }

    /// Why removing the fix cannot change a run of the release, when the
    /// registry says so: the fix acts only through a switch the release
    /// lacks ([`Switch::needs`], [`Switch::works_with`]), or a switch the
    /// release has replaced the code it changes ([`Switch::replaced_by`]).
    pub fn inert(self) -> Option<String> {
        if let Some(by) = self.switch.replaced_by().filter(|s| self.release.has(*s)) {
            return Some(format!(
                "{by} ({}) replaced the code it changes",
                by.info()
                    .since
                    .map_or("locksim".to_owned(), |v| v.to_string())
            ));
        }
        let lacking: Vec<&str> = self
            .switch
            .needs()
            .into_iter()
            .chain(self.switch.works_with().iter().copied())
            .filter(|s| !self.release.has(*s))
            .map(Switch::name)
            .collect();
        (!lacking.is_empty()).then(|| {
            format!(
                "acts only through {}, which {} lacks",
                lacking.join(", "),
                self.release
            )
        })
    }

    /// The command that replays `seed`, drawn by `strategy`, under the
    /// mutant (naming the seed's arm unless it is uniform).
    pub fn replay(self, seed: u64, strategy: sim::Strategy) -> String {
        let workload = sim::Workload {
            strategy,
            ..sim::Workload::default()
        };
        format!(
            "locksim replay {seed} {}{}",
            self.mutated().flags(),
            workload.for_seed(seed).flags()
        )
    }
}

/// The mutants of `release`, one per fix in force (a switch on in the
/// release whose [`lockcore::SwitchInfo::fixes`] is set), in the
/// registry's order: oldest release first.
pub fn mutants_of(release: Release) -> Vec<Mutant> {
    Switch::ALL
        .iter()
        .filter(|s| s.info().fixes && release.has(**s))
        .map(|&switch| Mutant { release, switch })
        .collect()
}
