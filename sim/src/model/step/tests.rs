//! The registry's checks: every registered step kind runs as something,
//! counts what it emits, and is named alike by serde, `Step::name` and
//! `NAMES`.

use super::{NAMES, Step, examples};
use crate::model::script::{Program, instructions};

/// A kind that gives neither a call nor instructions would be skipped
/// silently by every engine; a kind whose count is wrong would make the
/// compiler's jumps wrong.
#[test]
fn every_kind_runs_as_the_instructions_it_counts() {
    for step in examples() {
        let step = match step {
            // An empty repeat is refused by validation; give it a body.
            Step::Repeat(mut r) => {
                r.times = 2;
                r.steps = examples()
                    .into_iter()
                    .filter(|s| s.body().is_empty())
                    .collect();
                Step::Repeat(r)
            }
            other => other,
        };
        let one = std::slice::from_ref(&step);
        let program = Program::compile(one);
        assert!(program.len() > 0, "{} runs as nothing", step.name());
        assert_eq!(
            program.len(),
            instructions(one),
            "{} miscounts",
            step.name()
        );
    }
}

/// A scenario file names a kind as serde does; `Step::name` (the
/// horizon's report of steps not run) and `NAMES` (the guide's table
/// test) must say the same, in registration order.
#[test]
fn every_kind_is_named_alike_everywhere() {
    let all = examples();
    assert_eq!(all.len(), NAMES.len());
    for (step, name) in all.iter().zip(NAMES) {
        let json = serde_json::to_value(step).expect("a step serializes");
        assert_eq!(json["step"], *name, "{json}");
        assert_eq!(step.name(), *name);
        let back: Step = serde_json::from_value(json).expect("a step reads back");
        assert_eq!(&back, step);
    }
}

/// A kind without fields refuses one, as every kind does (before the
/// kinds were files, `{ step = "write", ms = 3 }` ran as a write: serde
/// ignores unknown fields of an internally tagged unit variant).
#[test]
fn a_kind_without_fields_refuses_an_unknown_one() {
    let err = serde_json::from_str::<Step>(r#"{"step": "write", "ms": 5}"#);
    assert!(err.is_err(), "{err:?}");
}
