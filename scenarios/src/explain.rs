//! Which fault of a run the oracle blamed for an expected loss.
//!
//! `sim::classify` explains a violation beyond the guarantee in words
//! (`the key expired at ... (pause A 45000ms at 5.000000s)`); charts and
//! explore's report need the fault itself, to label the violation with
//! the fault's kind, target and window and to count losses by kind. The
//! words quote the fault's timeline text, so the fault is found by that
//! text; three explanations name what Redis did instead (a restart, a
//! delete, a failover), and those map to the last fault of that kind.

use sim::{Cause, Fault, SimSpec, SimTime};

/// The fault of `spec` that `cause` names, for a violation at `at`;
/// `None` for a misuse or a defect, or when the words name no fault.
pub(crate) fn explaining_fault<'a>(
    spec: &'a SimSpec,
    cause: &Cause,
    at: SimTime,
) -> Option<&'a Fault> {
    let Cause::BeyondGuarantee { explained_by } = cause else {
        return None;
    };
    // The earliest quoted text, and of two texts quoted there the longer
    // (`crash A (restart after 5ms)` rather than `crash A`).
    let quoted = spec
        .faults
        .0
        .iter()
        .filter_map(|f| {
            let text = f.text();
            explained_by
                .find(&text)
                .map(|pos| (pos, std::cmp::Reverse(text.len()), f))
        })
        .min_by_key(|(pos, len, _)| (*pos, *len))
        .map(|(_, _, f)| f);
    quoted.or_else(|| {
        let kinds: &[&str] = if explained_by.contains("(restart)") {
            &["redis-restart", "redis-down"]
        } else if explained_by.contains("deleted the key") {
            &["delete-key"]
        } else if explained_by.contains("failover") {
            &["failover"]
        } else {
            &[]
        };
        spec.faults
            .0
            .iter()
            .filter(|f| f.at_ms() <= at.as_ms() && kinds.contains(&fault_kind(f).as_str()))
            .max_by_key(|f| f.at_ms())
    })
}

/// A fault's kind as the scenario format names it: `pause`, `redis-down`.
pub(crate) fn fault_kind(f: &Fault) -> String {
    crate::fault_line(f)
        .split(' ')
        .next()
        .unwrap_or("fault")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockcore::Release;

    fn causes(name: &str, profile: Release) -> (sim::Run, Vec<Option<String>>) {
        let s = crate::builtin(name).unwrap();
        let run = sim::run(&s.spec(None, Some(profile))).unwrap();
        let kinds = run
            .violations
            .iter()
            .map(|v| explaining_fault(&run.spec, &v.cause, v.at).map(fault_kind))
            .collect();
        (run, kinds)
    }

    /// The pause of stw-pause (000, 002) explains its mutual-exclusion
    /// violation; a deleted key and Redis's clock jump are found although
    /// their explanations name what Redis did, not the fault's text.
    #[test]
    fn the_blamed_fault_is_found() {
        let (_, kinds) = causes("stw-pause", Release::REDISSON);
        assert_eq!(kinds[0].as_deref(), Some("pause"));
        let (_, kinds) = causes("key-deleted", Release::REDISSON);
        assert_eq!(kinds[0].as_deref(), Some("delete-key"));
        let (_, kinds) = causes("clock-jump", Release::REDISSON);
        assert_eq!(kinds[0].as_deref(), Some("clock-jump"));
    }

    /// A misuse names no fault: lease-shorter-than-work (004) asks for it.
    #[test]
    fn a_misuse_names_no_fault() {
        let (run, kinds) = causes("lease-shorter-than-work", Release::REDISSON);
        assert!(matches!(run.violations[0].cause, Cause::Misuse { .. }));
        assert_eq!(kinds[0], None);
    }
}
