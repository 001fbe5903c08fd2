//! The JSON Schema of scenario files, generated from the types that parse
//! them ([`Scenario`] and sim's spec, steps and faults), so an editor's
//! TOML support (taplo, Even Better TOML) can complete fields and flag
//! mistakes while a file is typed. The checked-in copy,
//! `docs/scenario.schema.json`, is compared with this by a test.
//!
//! The schema knows what serde knows (field names, kinds, tags, unknown
//! fields refused) and the validator's fixed limits (horizon, leases,
//! delays, list lengths, name patterns); rules that relate two fields
//! (a fault before the horizon, a client that exists) stay the
//! validator's alone.

use schemars::generate::SchemaSettings;

use crate::Scenario;

/// The command that rewrites the checked-in schema.
pub const REPIN_COMMAND: &str = "cargo run -p locksim -- schema > docs/scenario.schema.json";

/// The schema of a scenario file, as pretty JSON ending in a newline.
pub fn scenario_schema() -> String {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let schema = generator.into_root_schema_for::<Scenario>();
    // A schema is plain JSON data: serializing it cannot fail.
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    /// The workspace's root, where `docs/` and the scenario folders are.
    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    fn validator() -> jsonschema::Validator {
        let schema: serde_json::Value = serde_json::from_str(&scenario_schema()).unwrap();
        jsonschema::validator_for(&schema).unwrap()
    }

    /// A TOML document as the JSON value an editor's TOML support checks.
    fn json_of(toml_text: &str) -> serde_json::Value {
        toml::from_str(toml_text).unwrap()
    }

    /// The schema's errors for `toml_text`, one line each.
    fn schema_errors(v: &jsonschema::Validator, toml_text: &str) -> Vec<String> {
        let doc = json_of(toml_text);
        v.iter_errors(&doc)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect()
    }

    /// The checked-in schema is the one the types generate: a field, a
    /// bound or a kind added to the types without re-pinning fails here.
    #[test]
    fn checked_in_schema_matches_the_types() {
        let path = root().join("docs/scenario.schema.json");
        let pinned = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            pinned == scenario_schema(),
            "docs/scenario.schema.json differs from the schema the types generate; \
             re-pin it with `{REPIN_COMMAND}`"
        );
    }

    /// Every built-in and history scenario, read as an editor reads it,
    /// is accepted by the schema: the schema is no stricter than the
    /// parser on the files the project ships (a tag or a flattened field
    /// described wrongly would reject them).
    #[test]
    fn every_shipped_scenario_is_accepted() {
        let v = validator();
        let mut checked = 0;
        for dir in ["scenarios/builtin", "scenarios/history"] {
            let mut files: Vec<_> = std::fs::read_dir(root().join(dir))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .collect();
            files.sort();
            for file in files {
                let text = std::fs::read_to_string(&file).unwrap();
                let errors = schema_errors(&v, &text);
                assert!(errors.is_empty(), "{}: {errors:#?}", file.display());
                checked += 1;
            }
        }
        assert!(checked >= 40, "only {checked} files");
    }

    /// A scenario both the schema and the parser accept; the cases below
    /// change one thing in it.
    const BASE: &str = r#"
name = "base"
description = "one client locks, works and unlocks while three faults strike"
[sim]
seed = 1
horizon_ms = 60000
[[sim.clients]]
name = "A"
[[sim.clients.threads]]
steps = [{ step = "lock", lease_ms = 5000 }, { step = "work", ms = 100 }, { step = "unlock" }]
[[sim.faults]]
fault = "drop-rate"
client = "A"
at_ms = 10
duration_ms = 100
probability = 0.5
[[sim.faults]]
fault = "delay-replies"
client = "A"
at_ms = 10
duration_ms = 100
delay_ms = 50
[[sim.faults]]
fault = "interrupt"
client = "A"
thread = 1
at_ms = 20
[expect.default]
verdict = "safe"
"#;

    /// `BASE` with `from` replaced by `to` (which must occur once).
    fn with(from: &str, to: &str) -> String {
        assert_eq!(BASE.matches(from).count(), 1, "{from}");
        BASE.replace(from, to)
    }

    /// The same mistakes are refused by the schema (so an editor flags
    /// them while typing) and by the validator (so `locksim run` does):
    /// misspelt fields at each level (the file, `[sim]`, a client, a
    /// step, a fault, an expectation), and values outside the validator's
    /// fixed limits. The base document is accepted by both, so each
    /// refusal is the change's.
    #[test]
    fn schema_and_validator_refuse_the_same_mistakes() {
        let v = validator();
        assert_eq!(schema_errors(&v, BASE), Vec::<String>::new());
        crate::Scenario::parse(BASE, "base").unwrap();
        let horizon = sim::MAX_HORIZON_MS;
        let cases = [
            ("description =", "descripton ="),
            ("horizon_ms = 60000", "horizon = 60000"),
            ("name = \"A\"", "name = \"A\"\nwatchdog_ms = 100"),
            ("lease_ms = 5000", "lease = 5000"),
            (
                "duration_ms = 100\nprobability",
                "duration = 100\nprobability",
            ),
            ("verdict = \"safe\"", "verdikt = \"safe\""),
            ("horizon_ms = 60000", "horizon_ms = 0"),
            (
                "horizon_ms = 60000",
                &format!("horizon_ms = {}", horizon + 1),
            ),
            ("lease_ms = 5000", "lease_ms = 0"),
            ("ms = 100 }", &format!("ms = {} }}", horizon + 1)),
            ("probability = 0.5", "probability = 1.5"),
            (
                "delay_ms = 50",
                &format!("delay_ms = {}", sim::MAX_DELAY_MS + 1),
            ),
            ("name = \"A\"", "name = \"A\"\nwatchdog_timeout_ms = 2"),
            ("name = \"base\"", "name = \"9lives\""),
            ("seed = 1", "seed = -1"),
            ("fault = \"drop-rate\"", "fault = \"drop-rat\""),
            ("step = \"unlock\"", "step = \"unlok\""),
            ("thread = 1", "thread = 0"),
        ];
        for (from, to) in cases {
            let text = with(from, to);
            assert!(
                !schema_errors(&v, &text).is_empty(),
                "the schema accepts `{to}`"
            );
            assert!(
                crate::Scenario::parse(&text, "case").is_err(),
                "the validator accepts `{to}`"
            );
        }
    }
}
