//! Which fault of a run the oracle blamed for an expected loss.
//!
//! `sim::classify` explains a violation beyond the guarantee in words
//! (`the key expired at ... (pause A 45000ms at 5.000000s)`) and names the
//! fault it blames as data ([`Cause::fault`]: its place in the plan);
//! charts and explore's report take the fault from there, to label the
//! violation with the fault's kind, target and window and to count losses
//! by kind. Where the words name what Redis did (a restart, a delete, a
//! failover), the fault is the last of that kind before the violation.

use sim::{Cause, Fault, SimSpec};

/// The fault of `spec` (the spec of the run classified) that `cause`
/// blames; `None` for a misuse or a defect, or when it blames none.
pub(crate) fn explaining_fault<'a>(spec: &'a SimSpec, cause: &Cause) -> Option<&'a Fault> {
    spec.faults.0.get(cause.fault()?)
}

/// A fault's kind as the scenario format names it: `pause`, `redis-down`.
pub(crate) fn fault_kind(f: &Fault) -> String {
    crate::render::fault_fields(f).0
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
            .map(|v| explaining_fault(&run.spec, &v.cause).map(fault_kind))
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

    /// The fault a cause blames as data is the one its words name: over
    /// explored runs of every fault kind, each blamed fault's timeline
    /// text is quoted in the explanation, except where the words name
    /// what Redis did (a restart, a delete, a failover), and then the
    /// fault is of a kind that does it.
    #[test]
    fn the_blamed_fault_is_the_one_the_words_name() {
        let mut blamed = 0;
        for seed in 0..300 {
            let spec = sim::generate_with(seed, None, sim::Workload::default());
            let run = sim::run(&spec).expect("an explored spec runs");
            for v in &run.violations {
                let Cause::BeyondGuarantee { explained_by, .. } = &v.cause else {
                    continue;
                };
                let Some(f) = explaining_fault(&run.spec, &v.cause) else {
                    continue;
                };
                blamed += 1;
                let kind = fault_kind(f);
                let redis_did = match kind.as_str() {
                    "redis-restart" | "shard-restart" | "redis-down" => {
                        explained_by.contains("(restart)")
                    }
                    "delete-key" => explained_by.contains("deleted the key"),
                    "failover" => explained_by.contains("failover"),
                    _ => false,
                };
                assert!(
                    redis_did || explained_by.contains(&f.text()),
                    "seed {seed}: {explained_by} blames {}",
                    f.text()
                );
            }
        }
        assert!(blamed >= 50, "{blamed} blamed faults: the test saw little");
    }

    /// A misuse names no fault: lease-shorter-than-work (004) asks for it.
    #[test]
    fn a_misuse_names_no_fault() {
        let (run, kinds) = causes("lease-shorter-than-work", Release::REDISSON);
        assert!(matches!(run.violations[0].cause, Cause::Misuse { .. }));
        assert_eq!(kinds[0], None);
    }
}
