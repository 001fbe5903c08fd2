//! Shrinking: the smallest fault plan that still breaks the same invariant.
//!
//! The seed and everything else in the spec stay fixed; only the fault
//! plan changes: faults are removed one at a time, then every duration of
//! the remaining faults is halved, as long as the invariant still breaks.
//! Each candidate is a full deterministic run, so the result is itself a
//! reproducible spec.

use lockcore::Profile;
use serde::Serialize;
use sim::{Fault, FaultPlan, Invariant, SimSpec};

use crate::{Expectation, Expectations, Scenario, Verdict};

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
    let mut best = spec.clone();
    let mut runs = 0;
    let try_candidate = |candidate: &SimSpec, runs: &mut usize| -> bool {
        if *runs >= budget {
            return false;
        }
        *runs += 1;
        breaks(candidate, invariant)
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
    // Then shorten what is left, halving each duration while it still breaks.
    loop {
        let mut improved = false;
        for f in 0..best.faults.0.len() {
            for field in shortenable_fields(&best.faults.0[f]) {
                while let Some(shorter) = halve(&best.faults.0[f], &field) {
                    let mut candidate = best.clone();
                    candidate.faults.0[f] = shorter;
                    if try_candidate(&candidate, &mut runs) {
                        best = candidate;
                        improved = true;
                    } else {
                        break;
                    }
                }
            }
        }
        if !improved || runs >= budget {
            break;
        }
    }
    Shrunk { spec: best, runs }
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
            (k.ends_with("_ms") && *k != "at_ms" || *k == "probability") && (v.is_u64() || v.is_f64())
        })
        .map(|(k, _)| k.clone())
        .collect();
    fields.sort();
    fields
}

/// `f` with `field` halved, or `None` when it cannot get smaller.
fn halve(f: &Fault, field: &str) -> Option<Fault> {
    let serde_json::Value::Object(mut map) = serde_json::to_value(f).ok()? else {
        return None;
    };
    let value = map.get(field)?;
    let smaller = if let Some(n) = value.as_u64() {
        (n > 1).then(|| serde_json::Value::from(n / 2))?
    } else {
        let p = value.as_f64()?;
        (p > 0.01).then(|| serde_json::Value::from(p / 2.0))?
    };
    map.insert(field.to_owned(), smaller);
    // A halved value may break a rule between fields (min above max); the
    // run then fails and the candidate is simply not taken.
    serde_json::from_value(serde_json::Value::Object(map)).ok()
}

/// A scenario file for a shrunk spec: it expects `invariant` to break
/// under `profile`, so `locksim run <file>` exits 0 while it still does.
pub fn shrunk_scenario(spec: &SimSpec, invariant: Invariant, profile: Profile) -> Scenario {
    let expectation = Expectation {
        verdict: Some(Verdict::Violated),
        violated: vec![invariant],
        why: Some(format!(
            "found by `locksim explore`, seed {} under {profile}, fault plan shrunk",
            spec.seed
        )),
        ..Expectation::default()
    };
    let mut expect = Expectations::default();
    match profile {
        Profile::RedissonLegacy => expect.redisson_legacy = Some(expectation),
        Profile::Redisson => expect.redisson = Some(expectation),
        Profile::RedissonBatched => expect.redisson_batched = Some(expectation),
        Profile::Fenced => expect.fenced = Some(expectation),
    }
    Scenario {
        name: format!("explored-{}-{profile}-{invariant}", spec.seed),
        description: format!(
            "Seed {} of locksim explore under {profile}, with its fault plan shrunk while {invariant} still breaks.",
            spec.seed
        ),
        source: None,
        sim: spec.clone(),
        expect,
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
