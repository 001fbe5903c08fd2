//! Shrinking: the smallest fault plan that still breaks the same invariant
//! (a defect: with the same signature).
//!
//! The seed and everything else in the spec stay fixed; only the fault
//! plan changes: faults are removed one at a time, then the clients and
//! threads the failure does not need, then Redis's replicas (none, else
//! one, when no fault left needs them: with replicas every lock script
//! waits for them from 3.16.7, which changes timing), then every duration
//! of the remaining faults is shortened (a binary search), as long as the
//! invariant still breaks.
//! Each candidate is a full deterministic run, so the result is itself a
//! reproducible spec.

use lockcore::Release;
use serde::Serialize;
use sim::{Fault, FaultPlan, Invariant, SimSpec};

use crate::{Expectation, Expectations, Scenario, Signature, Verdict};

/// The outcome of shrinking.
#[derive(Debug, Clone, PartialEq)]
pub struct Shrunk {
    /// The spec with the smallest fault plan found.
    pub spec: SimSpec,
    /// How many runs it took.
    pub runs: usize,
}

/// Whether `spec` runs and breaks `invariant`.
pub fn breaks(spec: &SimSpec, invariant: Invariant) -> bool {
    sim::run(spec).is_ok_and(|run| run.violations.iter().any(|v| v.invariant == invariant))
}

/// Shrinks `spec`'s fault plan while `invariant` still breaks, with at
/// most `budget` runs. A spec that does not break it is returned as is.
pub fn shrink(spec: &SimSpec, invariant: Invariant, budget: usize) -> Shrunk {
    shrink_as(spec, invariant, None, budget)
}

/// [`shrink`], keeping the violation's cause (`defect`, ...) when given:
/// a defect must not shrink into a run a fault explains.
pub fn shrink_as(
    spec: &SimSpec,
    invariant: Invariant,
    cause: Option<&str>,
    budget: usize,
) -> Shrunk {
    shrink_on(spec, invariant, cause, budget, &sim::Engine::Fast)
}

/// [`shrink_as`], each candidate run on `engine` (a deterministic one).
pub fn shrink_on(
    spec: &SimSpec,
    invariant: Invariant,
    cause: Option<&str>,
    budget: usize,
    engine: &sim::Engine,
) -> Shrunk {
    let mut best = spec.clone();
    let mut runs = 0;
    // A defect keeps its signature too, so that it cannot slip into
    // another defect on the way (3.13.6 seed 10697: a renewal's error
    // path, #3194, shrank into a renewal's 0, #3712, when the Redis
    // outage that failed it shrank into a restart).
    let signed = |run: &sim::Run| -> Vec<Signature> {
        run.violations
            .iter()
            .filter(|v| v.invariant == invariant && v.cause == sim::Cause::Defect)
            .map(|v| Signature::of(&run.history, v))
            .collect()
    };
    let keep: Option<Signature> = (cause == Some("defect"))
        .then(|| {
            engine
                .run(spec)
                .ok()
                .and_then(|run| signed(&run).into_iter().next())
        })
        .flatten();
    let try_candidate = |candidate: &SimSpec, runs: &mut usize| -> bool {
        if *runs >= budget {
            return false;
        }
        *runs += 1;
        engine.run(candidate).is_ok_and(|run| match &keep {
            Some(signature) => signed(&run).contains(signature),
            None => run
                .violations
                .iter()
                .any(|v| v.invariant == invariant && cause.is_none_or(|c| v.cause.name() == c)),
        })
    };
    // Remove whole faults first: the biggest step towards a minimal plan.
    let mut i = 0;
    while i < best.faults.0.len() {
        let mut candidate = best.clone();
        candidate.faults.0.remove(i);
        if try_candidate(&candidate, &mut runs) {
            best = candidate;
        } else {
            i += 1;
        }
    }
    drop_parties(&mut best, &mut runs, &try_candidate);
    drop_replicas(&mut best, &mut runs, &try_candidate);
    // Then shorten what is left: each duration comes down by half its
    // value, then by ever smaller steps (a binary search for the shortest
    // that still breaks).
    for f in 0..best.faults.0.len() {
        for field in shortenable_fields(&best.faults.0[f]) {
            let Some((start, whole)) = number(&best.faults.0[f], &field) else {
                continue;
            };
            let halve = |x: f64| if whole { (x / 2.0).floor() } else { x / 2.0 };
            let floor = (start / 64.0).max(if whole { 1.0 } else { 0.001 });
            let mut step = halve(start);
            while step >= floor {
                let current = number(&best.faults.0[f], &field).map_or(0.0, |(v, _)| v);
                let next = current - step;
                let accepted = next > 0.0
                    && with_number(&best.faults.0[f], &field, next).is_some_and(|shorter| {
                        let mut candidate = best.clone();
                        candidate.faults.0[f] = shorter;
                        let ok = try_candidate(&candidate, &mut runs);
                        if ok {
                            best = candidate;
                        }
                        ok
                    });
                if !accepted {
                    step = halve(step);
                }
                if runs >= budget {
                    break;
                }
            }
        }
    }
    Shrunk { spec: best, runs }
}

/// Removes the clients, then the threads, that the failure does not need
/// (a client's faults go with it), each kept when `still` says the
/// failure needs it.
fn drop_parties(
    best: &mut SimSpec,
    runs: &mut usize,
    still: &dyn Fn(&SimSpec, &mut usize) -> bool,
) {
    let mut c = 0;
    while c < best.clients.len() && best.clients.len() > 1 {
        let mut candidate = best.clone();
        let gone = candidate.clients.remove(c).name;
        candidate
            .faults
            .0
            .retain(|f| f.client() != Some(gone.as_str()));
        if still(&candidate, runs) {
            *best = candidate;
        } else {
            c += 1;
        }
    }
    for c in 0..best.clients.len() {
        let mut t = 0;
        while t < best.clients[c].threads.len() && best.clients[c].threads.len() > 1 {
            let mut candidate = best.clone();
            candidate.clients[c].threads.remove(t);
            if still(&candidate, runs) {
                *best = candidate;
            } else {
                t += 1;
            }
        }
    }
}

/// Takes Redis's replicas away (a fault that needs them is refused
/// without), else down to one, when the failure still shows.
fn drop_replicas(
    best: &mut SimSpec,
    runs: &mut usize,
    still: &dyn Fn(&SimSpec, &mut usize) -> bool,
) {
    for fewer in [0, 1] {
        if best.redis.replicas <= fewer {
            return;
        }
        let mut candidate = best.clone();
        candidate.redis.replicas = fewer;
        if still(&candidate, runs) {
            *best = candidate;
            return;
        }
    }
}

/// The numeric fields of a fault that make it bigger: durations and
/// delays (`*_ms` except when it strikes), and drop probabilities.
fn shortenable_fields(f: &Fault) -> Vec<String> {
    let Ok(serde_json::Value::Object(map)) = serde_json::to_value(f) else {
        return Vec::new();
    };
    let mut fields: Vec<String> = map
        .iter()
        .filter(|(k, v)| {
            (k.ends_with("_ms") && *k != "at_ms" || *k == "probability")
                && (v.is_u64() || v.is_f64())
        })
        .map(|(k, _)| k.clone())
        .collect();
    fields.sort();
    fields
}

/// The value of a numeric field of `f`, and whether it is a whole number.
fn number(f: &Fault, field: &str) -> Option<(f64, bool)> {
    let value = serde_json::to_value(f).ok()?.get(field)?.clone();
    Some((value.as_f64()?, value.is_u64()))
}

/// `f` with `field` set to `value` (whole fields stay whole), or `None`
/// when the result is not a valid fault.
fn with_number(f: &Fault, field: &str, value: f64) -> Option<Fault> {
    let serde_json::Value::Object(mut map) = serde_json::to_value(f).ok()? else {
        return None;
    };
    let new = if map.get(field)?.is_u64() {
        serde_json::Value::from(value.round() as u64)
    } else {
        serde_json::Value::from(value)
    };
    map.insert(field.to_owned(), new);
    // A smaller value may break a rule between fields (min above max); the
    // run then fails and the candidate is simply not taken.
    serde_json::from_value(serde_json::Value::Object(map)).ok()
}

/// A scenario file for a shrunk spec: it expects `invariant` to break
/// under `profile` (as a defect when `defect`), so `locksim run <file>`
/// exits 0 while it still does: kept in a corpus, it fails the day the
/// run changes.
pub fn shrunk_scenario(
    spec: &SimSpec,
    invariant: Invariant,
    profile: Release,
    defect: bool,
) -> Scenario {
    let expectation = Expectation {
        verdict: Some(Verdict::Violated),
        violated: vec![invariant],
        defects: if defect { vec![invariant] } else { Vec::new() },
        why: Some(format!(
            "seed {} of sim::generate under {profile}, with a fault plan on which {invariant} breaks",
            spec.seed
        )),
        ..Expectation::default()
    };
    let mut expect = Expectations::default();
    expect.set(profile, expectation);
    Scenario {
        // A release may read `3.23.4 +no-lock-resend`: names keep letters,
        // digits, '_' and '-'.
        name: format!(
            "explored-{}-{profile}-{invariant}{}",
            spec.seed,
            if defect { "-defect" } else { "" }
        )
        .replace(
            |c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "-",
        ),
        description: format!(
            "The scenario sim::generate draws from seed {} (as locksim explore and the \
             property tests use it) under {profile}, with a fault plan on which {invariant} \
             breaks, shrunk as far as it still does.",
            spec.seed
        ),
        source: None,
        sim: spec.clone(),
        expect,
        history: None,
    }
}

/// The fault plan alone, as JSON (one fault per element).
pub fn plan_json(plan: &FaultPlan) -> String {
    #[derive(Serialize)]
    struct Plan<'a> {
        faults: &'a FaultPlan,
    }
    serde_json::to_string_pretty(&Plan { faults: plan }).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Step;

    /// The stw-pause scenario (000, 002) with two faults that do not matter
    /// added: shrinking keeps only the pause, shortens it while mutual
    /// exclusion still breaks, and the result still breaks it.
    #[test]
    fn shrinks_to_the_fault_that_matters() {
        let mut spec = crate::builtin("stw-pause")
            .unwrap()
            .spec(None, Some(Release::REDISSON));
        spec.faults.0.push(Fault::Latency(sim::faults::Latency {
            client: "B".into(),
            at_ms: 70_000,
            duration_ms: 5_000,
            min_ms: 10,
            max_ms: 20,
        }));
        spec.faults.0.insert(
            0,
            Fault::Partition(sim::faults::Partition {
                client: "B".into(),
                at_ms: 60_000,
                duration_ms: 10_000,
            }),
        );
        assert!(breaks(&spec, Invariant::MutualExclusion));
        let shrunk = shrink(&spec, Invariant::MutualExclusion, 100);
        assert_eq!(shrunk.spec.faults.0.len(), 1, "{:?}", shrunk.spec.faults);
        let Fault::Pause(sim::faults::Pause { duration_ms, .. }) = shrunk.spec.faults.0[0] else {
            panic!("kept {:?}", shrunk.spec.faults.0[0]);
        };
        // The pause must still outlast the rest of the 30 s lease, so it
        // cannot be halved below about 25 s.
        assert!((25_000..45_000).contains(&duration_ms), "{duration_ms}");
        assert!(breaks(&shrunk.spec, Invariant::MutualExclusion));
        assert_eq!(
            (shrunk.spec.seed, &shrunk.spec.clients),
            (spec.seed, &spec.clients)
        );
    }

    /// A defect shrinks with its signature: 3.13.6 seed 10697's renewal
    /// error (#3194's path) shrank into a renewal's 0 (#3712's) when its
    /// Redis outage shrank into a restart, which kept the invariant and
    /// the cause but not the defect.
    #[test]
    fn a_defect_keeps_its_signature() {
        let release: Release = "3.13.6".parse().unwrap();
        let spec = sim::generate_with(10697, Some(release), sim::Workload::default());
        let signatures = |spec: &SimSpec| -> Vec<Signature> {
            let run = sim::run(spec).unwrap();
            let defects = run.violations.iter();
            let defects = defects.filter(|v| v.cause == sim::Cause::Defect);
            defects.map(|v| Signature::of(&run.history, v)).collect()
        };
        let before = signatures(&spec);
        let wanted = Signature {
            invariant: Invariant::MutualExclusion,
            steps: vec![
                Step::RenewalStopped {
                    reason: "error".into(),
                },
                Step::Hold { watchdog: true },
            ],
        };
        assert_eq!(before.first(), Some(&wanted));
        let shrunk = shrink_as(&spec, Invariant::MutualExclusion, Some("defect"), 200);
        assert!(shrunk.spec.faults.0.len() < spec.faults.0.len());
        assert!(signatures(&shrunk.spec).contains(&wanted));
    }

    /// A shrunk spec saved as a scenario file reads back and, run, gives
    /// what the file expects.
    #[test]
    fn shrunk_scenario_runs_as_expected() {
        let spec = crate::builtin("lease-disables-watchdog")
            .unwrap()
            .spec(None, Some(Release::REDISSON));
        let file =
            shrunk_scenario(&spec, Invariant::MutualExclusion, Release::REDISSON, false).to_toml();
        let s = Scenario::parse(&file, "shrunk.toml").unwrap();
        let t = crate::Trial::run(&s, None, None).unwrap();
        assert!(t.as_expected(), "{:?}", t.mismatches);
        assert!(plan_json(&spec.faults).contains("\"faults\""));
    }
}
