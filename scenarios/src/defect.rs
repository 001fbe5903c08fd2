//! A defect an explored run showed: what identifies it (its signature) and
//! which upstream fix removes it.
//!
//! Two runs show the same defect when they have the same [`Signature`]:
//! the same invariant broken after the same decisive records.
//!
//! Attribution is by experiment, not by pattern: the run is made again
//! under its release plus each Redisson fix the release lacks, oldest
//! first; the first fix under which the defect is gone names the upstream
//! issue whose path the run took.

use lockcore::{Release, Switch, SwitchSet};
use serde::Serialize;
use sim::{Cause, Invariant, Run, SimSpec};

use crate::open_issue::{OpenIssue, open_issue};
use crate::signature::Signature;

/// One defect of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Defect {
    /// The invariant it broke.
    pub invariant: Invariant,
    /// What identifies it across runs: `mutual-exclusion: lock stopped
    /// renewal (not-held) > return lock acquired`.
    pub signature: Signature,
    /// The Redisson fix that removes it, if one does.
    pub fixed_by: Option<Fix>,
    /// When no fix removes it: the open upstream issue whose path the
    /// run took, if one is known.
    pub open_issue: Option<OpenIssue>,
}

/// A Redisson change that removes a defect: `#6303 (batched-renewal,
/// 3.44.0)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fix {
    /// The behaviour switch.
    pub switch: String,
    /// The upstream issue or commit.
    pub upstream: String,
    /// The first release with it.
    pub release: String,
}

impl Fix {
    /// What a run's summary line says of it: `fixed by #6303`, or for a
    /// defect locksim found, `not reported upstream (locksim's fix:
    /// slots-renewed-apart)`.
    pub fn label(&self) -> String {
        if self.upstream == lockcore::NOT_REPORTED {
            format!("{} (locksim's fix: {})", self.upstream, self.switch)
        } else {
            format!("fixed by {}", self.upstream)
        }
    }
}

impl std::fmt::Display for Fix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.upstream == lockcore::NOT_REPORTED {
            return write!(
                f,
                "{} ({}, a fix locksim proposes)",
                self.upstream, self.switch
            );
        }
        if self.release == UNRELEASED {
            return write!(
                f,
                "{} ({}, a proposed fix in no release)",
                self.upstream, self.switch
            );
        }
        write!(
            f,
            "{} ({}, fixed in {})",
            self.upstream, self.switch, self.release
        )
    }
}

/// The defects of `run` (the run of `spec`), one per invariant, each
/// signed and attributed.
pub fn defects_of(spec: &SimSpec, run: &Run) -> Vec<Defect> {
    defects_attributed(spec, run, &sim::Engine::Fast)
}

/// [`defects_of`] for a run of `engine`: the experiments that name each
/// defect's fix run `spec` again on it, under other releases.
pub fn defects_attributed(spec: &SimSpec, run: &Run, engine: &sim::Engine) -> Vec<Defect> {
    attributed(&mut Experiments::new(spec, run, engine), run)
}

fn attributed(experiments: &mut Experiments<'_>, run: &Run) -> Vec<Defect> {
    let mut found = defects_signed(run);
    for d in &mut found {
        let first = run
            .violations
            .iter()
            .find(|v| v.cause == Cause::Defect && v.invariant == d.invariant);
        experiments.key = first.and_then(|v| v.key(&run.history));
        d.fixed_by = fixed_by(experiments, d.invariant);
        if d.fixed_by.is_none() {
            d.open_issue =
                first.and_then(|v| open_issue(experiments.spec.profile, &run.history, v));
        }
        if d.fixed_by.is_none() && d.open_issue.is_none() {
            d.fixed_by = masked_fix(experiments, d.invariant);
        }
        if d.fixed_by.is_none() && d.open_issue.is_none() {
            d.fixed_by = told_apart(experiments, d, first);
        }
    }
    found
}

/// Last, the tests again with the defect told apart more finely: a later
/// release can break the invariant on the same key by another path,
/// which the key alone takes for this defect, so no fix passes the
/// strict test. First by its clients too (3.45.0 seed 1862 of the
/// Sentinel audit: B's write lock renewed after its unlock, #6144, and
/// under 4.7.0 A's read lock renewed after its unlock by an interrupted
/// acquire, #7272), then by its signature too (seed 11433: B's lock
/// renewed after an unlock a demoted primary's `WAIT` error failed,
/// 58947344d, and later after an interrupted acquire, #7272). Then a
/// defect the newest release still shows with the same clients may be a
/// proposed fix's, which no upgrade removes (seed 2517: #6144 and #7272
/// in series). Only here: a fix moves which clients a defect names
/// (3.45.0 seed 6823's liveness) and its signature, so every test before
/// asks by key alone.
fn told_apart(
    experiments: &mut Experiments<'_>,
    d: &Defect,
    first: Option<&sim::Violation>,
) -> Option<Fix> {
    experiments.clients = first.map(|v| sorted(&v.clients));
    let mut found =
        fixed_by(experiments, d.invariant).or_else(|| masked_fix(experiments, d.invariant));
    if found.is_none() {
        experiments.signature = Some(d.signature.clone());
        found = fixed_by(experiments, d.invariant).or_else(|| masked_fix(experiments, d.invariant));
        experiments.signature = None;
    }
    let found = found.or_else(|| proposed_fix_on_newest(experiments, d.invariant));
    experiments.clients = None;
    found
}

/// `clients` in order, as an experiment's defects keep them.
fn sorted(clients: &[String]) -> Vec<String> {
    let mut clients = clients.to_vec();
    clients.sort();
    clients
}

/// The run's defects (its first violation of each invariant that is a
/// defect), signed but not yet attributed: no experiment is run.
pub(crate) fn defects_signed(run: &Run) -> Vec<Defect> {
    let mut found: Vec<Defect> = Vec::new();
    for v in run.violations.iter().filter(|v| v.cause == Cause::Defect) {
        if found.iter().any(|d| d.invariant == v.invariant) {
            continue;
        }
        found.push(Defect {
            invariant: v.invariant,
            signature: Signature::of(&run.history, v),
            fixed_by: None,
            open_issue: None,
        });
    }
    found
}

/// The Redisson fix the run's release lacks that removes the defect, by
/// experiment; only switches that fix something are candidates (see
/// [`lockcore::SwitchInfo::fixes`]: a timer-tick change that makes a
/// defect disappear moved its timing). Each fix (oldest first) must
/// remove it: the run under the release plus the fix has no such defect.
/// The strict test then asks that the newest release minus the fix show
/// it again and the newest release not (so a fix that only shifts the
/// timing is not named); when no
/// fix passes it (two later fixes may each remove the defect, as 3.24's
/// unlock latch and 3.37's end of resends do for a false unlock error),
/// a fix that works through
/// others must differ in the defect from the run's release given those
/// others alone (a controlled pair: the two runs differ in the fix alone);
/// failing that, the release that brought the fix must show it without
/// the fix and not with it; failing that, a fix proposed upstream that
/// removes it is named; failing that, the strict test again, given the
/// run's release's switches that fix nothing (its timer tick, its WAIT)
/// and without the later fixes that also remove it. A fix named by the
/// last tests may still be one that only shifts the timing.
fn fixed_by(experiments: &mut Experiments<'_>, invariant: Invariant) -> Option<Fix> {
    let release = experiments.spec.profile;
    let fixes = candidate_fixes(experiments.spec);
    let newest = Release::version(lockcore::Version::NEWEST);
    // Oldest first, the first removing fix that passes the strict test
    // wins; the rest need testing only when none does.
    let mut removing = Vec::new();
    for (since, switch) in fixes {
        let fixed = switch
            .works_with()
            .iter()
            .fold(with_repairs(release, switch), |r, &w| r.with(w));
        if experiments.shows(fixed, invariant) != Some(false) {
            continue;
        }
        if experiments.pair(newest, switch, invariant) {
            return Some(fix((since, switch)));
        }
        removing.push((since, switch));
    }
    // A fix that works through others is then tested as a controlled
    // pair on the run's own release: given the others alone it still
    // shows the defect, given the fix too it does not. Releases from
    // 3.49 draw their timer's tick at random, so a later release may not
    // reproduce the run at all (seed 5 under `redisson`: its unsynced
    // unlock retry meets the lock gone, #6651, but under 3.52.0 the key
    // expires before the unlock).
    for &(since, switch) in &removing {
        let works_with = switch.works_with();
        if works_with.is_empty() {
            continue;
        }
        let given = works_with.iter().fold(release, |r, &w| r.with(w));
        if experiments.shows(given, invariant) == Some(true) {
            return Some(fix((since, switch)));
        }
    }
    for &(since, switch) in &removing {
        if experiments.pair(Release::version(since), switch, invariant) {
            return Some(fix((since, switch)));
        }
    }
    // A defect still open upstream goes to its proposed fix before a
    // released fix that removes it only by moving a timer (3.8.0 seed 16:
    // an interrupted acquire, #7272, that the unlock latch happens to
    // avoid on the newest release with 3.8.0's tick).
    if let Some(found) = proposed_fix(experiments, invariant) {
        return Some(found);
    }
    strict_like_run(experiments, &removing, invariant).map(fix)
}

/// `release` with `switch` and the later fixes of its own faults
/// ([`Switch::repaired_by`]), as an upgrade past them all gives it.
fn with_repairs(release: Release, switch: Switch) -> Release {
    (switch.repaired_by().iter()).fold(release.with(switch), |r, &fix| r.with(fix))
}

/// The fixes the run's release lacks that could act on it, oldest first.
/// A fix of what happens after the WAIT for replicas cannot act on a run
/// that sends none (no replicas, or a release before 3.16.7).
fn candidate_fixes(spec: &SimSpec) -> Vec<(lockcore::Version, Switch)> {
    let release = spec.profile;
    let mut fixes: Vec<(lockcore::Version, Switch)> = Switch::ALL
        .iter()
        .filter(|s| s.info().fixes && !release.has(**s) && can_act(**s, spec))
        .filter_map(|s| Some((s.info().since?, *s)))
        .collect();
    fixes.sort();
    fixes
}

/// Whether `switch` can change a run of `spec` at all: one that works
/// through another needs it in force (a fix of what follows the `WAIT`
/// for replicas needs a `WAIT` sent, so replicas too), the per-slot
/// renewal needs a cluster behind a proxy, and a chain per slot a
/// cluster.
fn can_act(switch: Switch, spec: &SimSpec) -> bool {
    let release = spec.profile;
    let needed = match switch.needs() {
        Some(Switch::LockWaitsForReplicas) => {
            spec.redis.replicas > 0 && release.has(Switch::LockWaitsForReplicas)
        }
        Some(other) => release.has(other),
        None => true,
    };
    needed
        && (switch != Switch::RenewalBySlot || spec.redis.proxy)
        && (switch != Switch::SlotsRenewedApart || spec.redis.shards > 0)
}

/// What a fix, shipped in `since`, is named.
fn fix((since, switch): (lockcore::Version, Switch)) -> Fix {
    Fix {
        switch: switch.name().to_owned(),
        upstream: switch.info().upstream.to_owned(),
        release: since.to_string(),
    }
}

/// Last, for a defect neither a fix nor an open issue names: a fix that
/// the tests of [`fixed_by`] miss because the run needs two to lose the
/// defect, the path it took and another that fixing the first lays bare
/// (3.45.0 seed 454: a re-entrant holder's stale head renews A/t1's
/// field, so A/t2's key expires, #6144; with #6144 alone, #6844's race
/// breaks the same lock earlier). Each fix the release lacks, oldest
/// first, is tested as a pair on the newest release given the run's
/// switches that fix nothing, where every other fix is in force.
fn masked_fix(experiments: &mut Experiments<'_>, invariant: Invariant) -> Option<Fix> {
    let newest = Release::version(lockcore::Version::NEWEST);
    let newest_like_run = like(newest, experiments.spec.profile);
    candidate_fixes(experiments.spec)
        .into_iter()
        .find(|&(_, switch)| experiments.pair(newest_like_run, switch, invariant))
        .map(fix)
}

/// The last test: the strict test again, given the run's release's
/// behaviour where a switch fixes nothing (the timer's tick, the WAIT for
/// replicas), so a defect shown without the fix is not an artefact of
/// when timers fire (3.44.0 seed 37338: the #6844 race needs 3.44.0's
/// 100 ms tick, which 3.49 made random), and without the later fixes that
/// also remove it on the run's release, so the pair differs in this fix
/// alone (3.8.0 seed 2: a resent unlock finds the lock gone; the latch,
/// #4871, and the end of resends, #6144, each prevent it).
fn strict_like_run(
    experiments: &mut Experiments<'_>,
    removing: &[(lockcore::Version, Switch)],
    invariant: Invariant,
) -> Option<(lockcore::Version, Switch)> {
    let newest = Release::version(lockcore::Version::NEWEST);
    let newest_like_run = like(newest, experiments.spec.profile);
    let found = removing.iter().enumerate().find(|&(i, &(_, switch))| {
        let base = removing[i + 1..]
            .iter()
            .fold(newest_like_run, |r, &(_, later)| r.without(later));
        experiments.pair(base, switch, invariant)
    });
    found.map(|(_, &f)| f)
}

/// `target` with `release`'s switches that fix nothing.
pub(crate) fn like(target: Release, release: Release) -> Release {
    Switch::ALL
        .iter()
        .filter(|s| !s.info().fixes)
        .fold(target, |r, &s| {
            if release.has(s) {
                r.with(s)
            } else {
                r.without(s)
            }
        })
}

/// What [`Fix::release`] says of a fix proposed upstream but in no
/// release.
pub const UNRELEASED: &str = "no release";

/// A fix proposed upstream and in no release (PR #7277 for #7272) that
/// removes the defect: the release plus it loses the defect. The defect
/// is open upstream, so there is no release without it to compare with.
fn proposed_fix(experiments: &mut Experiments<'_>, invariant: Invariant) -> Option<Fix> {
    proposed_removing(experiments, experiments.spec.profile, invariant)
}

/// For a defect that needs two fixes, one released and one proposed
/// upstream (3.45.0 seed 2517 of the Sentinel audit: a stale head of the
/// renewal entry, #6144, and an interrupted acquire's count, #7272): the
/// newest release still shows it, given the run's switches that fix
/// nothing, and the newest plus a proposed fix does not. It is that open
/// issue's, which no upgrade removes.
fn proposed_fix_on_newest(experiments: &mut Experiments<'_>, invariant: Invariant) -> Option<Fix> {
    let newest = like(
        Release::version(lockcore::Version::NEWEST),
        experiments.spec.profile,
    );
    if experiments.shows(newest, invariant) != Some(true) {
        return None;
    }
    proposed_removing(experiments, newest, invariant)
}

/// The first fix proposed upstream, or by locksim for a defect it found
/// ([`lockcore::NOT_REPORTED`]), that `base` lacks, that can explain
/// `invariant` ([`explains`]) and whose addition loses the defect. Tried
/// before the open issues' paths, as every fix: a path's predicate reads
/// the history loosely (4.7.0 seeds 96428 and 99169 of a cluster, locks
/// lost behind a paused master, also took the paths of #4109 and of a
/// multi-lock unlock that stopped), where a fix is an experiment.
fn proposed_removing(
    experiments: &mut Experiments<'_>,
    base: Release,
    invariant: Invariant,
) -> Option<Fix> {
    let switch = Switch::ALL
        .iter()
        .filter(|s| s.is_proposed_fix() && !base.has(**s) && can_act(**s, experiments.spec))
        .filter(|s| explains(**s, invariant))
        .find(|&&switch| experiments.shows(base.with(switch), invariant) == Some(false))?;
    Some(Fix {
        switch: switch.name().to_owned(),
        upstream: switch.info().upstream.to_owned(),
        release: UNRELEASED.to_owned(),
    })
}

/// Whether `switch` can be what removes a defect of `invariant`. A chain
/// per slot (`slots-renewed-apart`) keeps keys renewed that the one chain
/// let expire under their holders: it explains a lock two threads
/// believe they hold, and nothing else; any other defect it removes it
/// only moves (4.7.0 seeds 14486, a multi-lock unlock that stopped at an
/// error; 20670, a fair waiter's place left; 89176, locks left behind).
fn explains(switch: Switch, invariant: Invariant) -> bool {
    switch != Switch::SlotsRenewedApart
        || matches!(
            invariant,
            Invariant::MutualExclusion | Invariant::ReaderWriterExclusion
        )
}

/// The runs of one release that showed one defect: a group of explore's
/// findings, by signature.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct DefectGroup {
    /// The release (model) they ran under.
    pub(crate) model: Release,
    /// The invariant.
    pub(crate) invariant: Invariant,
    /// The signature.
    pub(crate) signature: Signature,
    /// The Redisson fix that removes it, if one does.
    pub(crate) fixed_by: Option<Fix>,
    /// Else the open upstream issue whose path it took, if known.
    pub(crate) open_issue: Option<OpenIssue>,
    /// How many runs showed it.
    pub(crate) runs: u64,
    /// The first of them.
    pub(crate) seed: u64,
    /// The first's branch of its seed's run, if it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) branch: Option<sim::BranchPath>,
    /// The command that replays the first.
    pub(crate) replay: String,
}

/// The runs of one spec under other releases, each made once: a run
/// that breaks several invariants asks the same releases about each.
///
/// A deterministic run depends on its release only through the switches
/// its clients asked about ([`Run::switches_read`]), so a run known under
/// one release answers for every release that agrees with it on those:
/// most fixes a run never came near cost no run at all.
struct Experiments<'a> {
    spec: &'a SimSpec,
    engine: &'a sim::Engine,
    /// The invariants the explored run broke as defects: the only ones
    /// asked about, so the only ones an experiment is judged on (the
    /// other checkers were a tenth of an experiment's cost).
    asked: Vec<Invariant>,
    /// The runs made so far (the explored run itself first, when every
    /// client ran the spec's release).
    known: Vec<Known>,
    /// The Redis key of the defect being attributed (its first
    /// violation's): an experiment shows it only by a defect of its
    /// invariant on that key, so a fix that removes it is named even when
    /// the run broke the invariant on another lock too, by another path
    /// (3.45.0 seed 349: a re-entrant spin lock renewed after its unlock,
    /// #6144, and a read lock, PR #6883). Not its clients too: a fix
    /// moves which waiters a liveness failure names (3.45.0 seed 6823).
    key: Option<String>,
    /// When set, the clients of the defect being attributed (its first
    /// violation's, in order): an experiment shows it only by a defect of
    /// its invariant on its key that names the same clients.
    clients: Option<Vec<String>>,
    /// When set, the signature of the defect being attributed: an
    /// experiment shows it only by a defect whose signature ends with its
    /// steps too (see [`Signature::ends`]).
    signature: Option<Signature>,
    /// Whether a known run answers for other releases that agree with it
    /// on what it read (off: only for its own switches; tests compare).
    reuse: bool,
}

/// One run of the spec: under which switches, which of them it asked
/// about, and the invariants it broke as defects (`None` when it could
/// not run).
struct Known {
    switches: SwitchSet,
    read: SwitchSet,
    defects: Option<Vec<KeyedDefect>>,
}

/// A defect of an experiment: its invariant, its key, its clients and
/// its signature.
type KeyedDefect = (Invariant, Option<String>, Vec<String>, Signature);

impl Known {
    fn of(switches: SwitchSet, run: &Run) -> Known {
        Known {
            switches,
            read: run.switches_read,
            defects: Some(defect_keys(run).collect()),
        }
    }
}

/// The invariants `run` broke as defects (one per violation).
fn defect_invariants(run: &Run) -> impl Iterator<Item = Invariant> + '_ {
    run.violations
        .iter()
        .filter(|v| v.cause == Cause::Defect)
        .map(|v| v.invariant)
}

/// The invariants `run` broke as defects, each with the key it broke on,
/// the clients it names and its signature.
fn defect_keys(run: &Run) -> impl Iterator<Item = KeyedDefect> + '_ {
    run.violations
        .iter()
        .filter(|v| v.cause == Cause::Defect)
        .map(|v| {
            let signature = Signature::of(&run.history, v);
            (
                v.invariant,
                v.key(&run.history),
                sorted(&v.clients),
                signature,
            )
        })
}

impl<'a> Experiments<'a> {
    fn new(spec: &'a SimSpec, run: &Run, engine: &'a sim::Engine) -> Self {
        let one_release = spec
            .clients
            .iter()
            .all(|c| c.profile.is_none_or(|p| p == spec.profile));
        let known = match one_release {
            true => vec![Known::of(spec.profile.switches(), run)],
            false => Vec::new(),
        };
        let mut asked: Vec<Invariant> = defect_invariants(run).collect();
        asked.sort_unstable();
        asked.dedup();
        Experiments {
            spec,
            engine,
            asked,
            known,
            key: None,
            clients: None,
            signature: None,
            reuse: true,
        }
    }

    /// Whether the spec run under `release` breaks `invariant` as a
    /// defect (`None` when it cannot run).
    /// Whether `switch` makes the difference on `release`: without it the
    /// run shows the defect, with it not (a defect `release` shows anyway,
    /// one still open upstream, is no fix's: 3.8.0 seed 16's interrupted
    /// acquire, #7272, shows under every release).
    fn pair(&mut self, release: Release, switch: Switch, invariant: Invariant) -> bool {
        self.shows(with_repairs(release, switch), invariant) == Some(false)
            && self.shows(release.without(switch), invariant) == Some(true)
    }

    fn shows(&mut self, release: Release, invariant: Invariant) -> Option<bool> {
        // An experiment judged without this invariant's checker cannot
        // answer for it.
        debug_assert!(self.asked.contains(&invariant), "{invariant:?} not asked");
        let switches = release.switches();
        let i = match self.known.iter().position(|k| match self.reuse {
            true => k.switches.agrees_on(switches, k.read),
            false => k.switches == switches,
        }) {
            Some(i) => i,
            None => {
                self.known.push(self.run_under(release));
                self.known.len() - 1
            }
        };
        let defects = self.known[i].defects.as_ref();
        let (key, clients) = (self.key.as_ref(), self.clients.as_ref());
        let signature = self.signature.as_ref();
        defects.map(|d| {
            d.iter().any(|(i, k, c, s)| {
                *i == invariant
                    && key.is_none_or(|key| k.as_ref() == Some(key))
                    && clients.is_none_or(|clients| c == clients)
                    && signature.is_none_or(|signature| signature.ends(s))
            })
        })
    }

    /// The spec run under `release` on the engine. A release under which
    /// lockcore refuses one of the spec's lock objects cannot answer: its
    /// run loses the defect only because a thread never held (3.43.0 plus
    /// 3.44's batched renewal refuses a watchdog read lock, and #6303
    /// would be named for a read-write defect).
    fn run_under(&self, release: Release) -> Known {
        let mut spec = self.spec.clone();
        spec.profile = release;
        for c in &mut spec.clients {
            c.profile = c.profile.map(|_| release);
        }
        let cannot = Known {
            switches: release.switches(),
            read: SwitchSet::all(),
            defects: None,
        };
        if refuses(&spec) {
            return cannot;
        }
        match self.engine.run_judged_on(spec, &self.asked) {
            Ok(run) => Known::of(release.switches(), &run),
            Err(_) => cannot,
        }
    }
}

/// Whether lockcore refuses an acquire of `spec` under its release
/// ([`lockcore::LockKind::refusal`]).
fn refuses(spec: &SimSpec) -> bool {
    fn acquires(steps: &[sim::Step], out: &mut Vec<bool>) {
        for s in steps {
            if s.is_acquire() {
                out.push(s.lease_ms().is_none());
            }
            acquires(s.body(), out);
        }
    }
    spec.clients.iter().any(|c| {
        let release = c.profile.unwrap_or(spec.profile);
        c.threads.iter().any(|t| {
            let mut watchdogs = Vec::new();
            acquires(&t.steps, &mut watchdogs);
            let kind = t.object().kind();
            watchdogs
                .iter()
                .any(|&w| kind.refusal(release, w).is_some())
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run under a release that refuses a thread's read lock (fencing
    /// tokens, which cover `RLock` only) answers nothing, so no fix is
    /// named for a defect the refusal hid; an `RLock` run answers.
    #[test]
    fn a_release_that_refuses_a_lock_answers_nothing() {
        let mut spec =
            sim::generate_with(1, Some("3.43.0".parse().unwrap()), sim::Workload::default());
        assert!(!refuses(&spec));
        let thread = &mut spec.clients[0].threads[0];
        thread.steps = vec![sim::Step::ReadLock(sim::steps::ReadLock {
            lease_ms: None,
            is_async: false,
        })];
        assert!(!refuses(&spec));
        spec.profile = spec.profile.with(Switch::BatchedRenewal);
        assert!(!refuses(&spec), "ReadLockTask renews it");
        spec.profile = spec.profile.with(Switch::Fencing);
        assert!(refuses(&spec));
    }

    /// Reusing a run for the releases that agree with it on the switches
    /// it read names the same fixes as making every experiment: over
    /// explored seeds of several releases, with and without faults that
    /// interleave callbacks, the attributions are equal, and reuse saved
    /// runs.
    #[test]
    fn reusing_runs_names_the_same_fixes() {
        let releases = ["redisson", "3.16.6", "3.12.5", "3.45.0", "redisson-legacy"];
        let (mut defects, mut runs_reused, mut runs_every) = (0, 0, 0);
        let engine = sim::Engine::Fast;
        for release in releases {
            let release: Release = release.parse().expect("a release");
            for seed in 0..60 {
                let spec = sim::generate_with(seed, Some(release), sim::Workload::default());
                let run = sim::run(&spec).expect("an explored spec runs");
                let mut reused = Experiments::new(&spec, &run, &engine);
                let mut every = Experiments::new(&spec, &run, &engine);
                every.reuse = false;
                let a = attributed(&mut reused, &run);
                let b = attributed(&mut every, &run);
                assert_eq!(a, b, "seed {seed} under {release}");
                defects += a.len();
                runs_reused += reused.known.len();
                runs_every += every.known.len();
            }
        }
        assert!(
            defects >= 5,
            "{defects} defects: the comparison tested little"
        );
        assert!(
            runs_reused < runs_every,
            "reuse saved no run ({runs_reused} of {runs_every})"
        );
    }
}
