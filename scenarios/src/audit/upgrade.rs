//! The upgrade that removes what an audit found: the smallest release
//! with every fix, audited again under the same settings and usage (and
//! again, while that shows a defect a later release fixes), and the
//! behaviour changes on the way, from the switch registry.

use lockcore::{Release, Switch, Version};
use serde::Serialize;

use super::exposure::{self, Status, Sweep};
use super::{AuditOptions, Exposure};

/// How many releases an upgrade tries at most: each try is an audit.
const MAX_TRIES: usize = 3;

/// The release to upgrade to, and what it changes.
#[derive(Debug, Clone, Serialize)]
pub struct Upgrade {
    /// The smallest release that removes every defect a release fixes.
    pub to: String,
    /// The defects it removes, by title.
    pub removes: Vec<String>,
    /// The defects no release removes (open upstream, with or without a
    /// proposed fix, or not reported upstream), by name: they stay after
    /// any upgrade.
    pub stays: Vec<String>,
    /// The defects no experiment attributed: no release is known to
    /// remove them, and whether the upgrade's own audit still shows each
    /// (by its signature) is all that can be said.
    pub unattributed: Vec<Unattributed>,
    /// The releases tried before it, each with the defect that moved the
    /// search on.
    pub tried: Vec<String>,
    /// Its own audit: what it still shows.
    pub after: Vec<Exposure>,
    /// Its runs, as audited.
    pub runs: u64,
    /// The behaviour changes between the two releases.
    pub changes: Vec<Change>,
}

/// A defect of the audited release that no experiment attributed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unattributed {
    /// What identifies it.
    pub signature: String,
    /// Whether the upgrade's audit shows a defect of the same signature.
    pub seen_after: bool,
}

/// One behaviour change between the user's release and the upgrade.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The switch's name.
    pub switch: &'static str,
    /// The release that brought it.
    pub release: String,
    /// The upstream issue or commit.
    pub upstream: &'static str,
    /// What it changes.
    pub summary: &'static str,
    /// Whether it fixes a defect locksim models.
    pub fixes: bool,
}

/// The upgrade for what `found` showed, if a release fixes any of it.
pub fn upgrade(o: &AuditOptions, found: &Sweep) -> Option<Upgrade> {
    let from = o.release.base_version();
    let mut target = newest_fix(&found.exposures, from)?;
    let mut tried = Vec::new();
    let mut after;
    loop {
        after = exposure::sweep(o.range, Release::version(target), &o.settings, &o.tailor);
        let next = newest_fix(&after.exposures, target);
        match next {
            Some(later) if tried.len() + 1 < MAX_TRIES => {
                tried.push(format!("{target}: still shows a defect fixed in {later}"));
                target = later;
            }
            _ => break,
        }
    }
    let found: Vec<&Status> = found.exposures.iter().map(|e| &e.status).collect();
    let shown: Vec<&Status> = after.exposures.iter().map(|e| &e.status).collect();
    let (removes, stays, unattributed) = classify(&found, &shown);
    Some(Upgrade {
        to: target.to_string(),
        removes,
        stays,
        unattributed,
        tried,
        runs: after.runs,
        after: after.exposures,
        changes: changes(from, target),
    })
}

/// What becomes of each defect of `found` on the upgrade whose audit
/// showed `after`: a release removes it, it stays (open upstream, with or
/// without a proposed fix, or not reported), or no experiment attributed
/// it and all that is known is whether `after` shows it too. By name.
fn classify(found: &[&Status], after: &[&Status]) -> (Vec<String>, Vec<String>, Vec<Unattributed>) {
    let (mut removes, mut stays, mut unattributed) = (Vec::new(), Vec::new(), Vec::new());
    for &status in found {
        match status {
            Status::Unattributed { signature } => unattributed.push(Unattributed {
                signature: signature.clone(),
                seen_after: after.contains(&status),
            }),
            s if s.fixed_in().is_some() => removes.push(s.name()),
            s => stays.push(s.name()),
        }
    }
    (removes, stays, unattributed)
}

/// The newest release among the fixes of `exposures` later than `from`.
fn newest_fix(exposures: &[Exposure], from: Version) -> Option<Version> {
    exposures
        .iter()
        .filter_map(|e| e.status.fixed_in())
        .filter(|v| *v > from)
        .max()
}

/// The switches that arrive after `from`, up to `to`, in release order.
fn changes(from: Version, to: Version) -> Vec<Change> {
    let mut out: Vec<(Version, Change)> = Switch::ALL
        .iter()
        .filter_map(|s| {
            let info = s.info();
            let since = info.since?;
            (since > from.lock_code() && since <= to.lock_code()).then(|| {
                let change = Change {
                    switch: info.name,
                    release: since.to_string(),
                    upstream: info.upstream,
                    summary: info.summary,
                    fixes: info.fixes,
                };
                (since, change)
            })
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.switch.cmp(b.1.switch)));
    out.into_iter().map(|(_, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed defect is removed, an open or unreported one stays (named
    /// by its path when unreported), and an unattributed one is neither:
    /// the upgrade's own audit says whether it still shows it (3.45.0's
    /// Sentinel audit once listed four such groups as staying after any
    /// upgrade, none of which 4.7.0's audit showed).
    #[test]
    fn an_unattributed_defect_is_not_said_to_stay() {
        let fixed = Status::Fixed {
            upstream: "#6144".into(),
            switch: "queue-cleared-on-unlock".into(),
            release: "3.46.0".into(),
        };
        let unreported = Status::Unreported {
            path: "a path".into(),
        };
        let gone = Status::Unattributed {
            signature: "renewal-after-unlock: return unlock error > renew-sent".into(),
        };
        let kept = Status::Unattributed {
            signature: "liveness: call lock".into(),
        };
        let (removes, stays, unattributed) =
            classify(&[&fixed, &unreported, &gone, &kept], &[&unreported, &kept]);
        assert_eq!(
            removes,
            ["#6144 (queue-cleared-on-unlock), fixed in 3.46.0"]
        );
        assert_eq!(stays, ["not reported upstream: a path"]);
        assert_eq!(
            unattributed,
            [
                Unattributed {
                    signature: "renewal-after-unlock: return unlock error > renew-sent".into(),
                    seen_after: false,
                },
                Unattributed {
                    signature: "liveness: call lock".into(),
                    seen_after: true,
                },
            ]
        );
    }
}
