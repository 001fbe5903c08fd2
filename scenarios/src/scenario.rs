//! A scenario: a named, described simulation with the outcome each profile
//! must give. Built-in scenarios and users' files share this one format.

use std::collections::BTreeSet;

use lockcore::Release;
use serde::{Deserialize, Serialize};
use sim::{SimError, SimSpec};

use crate::{Expectation, Expectations, HistoryRow, InputError, Location};

/// A scenario file, as data. The simulation itself is sim's [`SimSpec`]
/// verbatim under `[sim]`; `--seed` and `--profile` override its `seed`
/// and `profile`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A short kebab-case name (`stw-pause`).
    #[schemars(pattern(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"))]
    pub name: String,
    /// What is simulated, in a sentence or two.
    pub description: String,
    /// The source document and section it reproduces (`004, experiment 2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// What to simulate.
    pub sim: SimSpec,
    /// What each profile must give.
    #[serde(default)]
    pub expect: Expectations,
    /// The row of Redisson's history it shows, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<HistoryRow>,
}

impl Scenario {
    /// Parses and validates a scenario file. `origin` names the file in
    /// errors (a path, or `builtin:<name>`).
    pub fn parse(text: &str, origin: &str) -> Result<Scenario, InputError> {
        let scenario: Scenario =
            toml::from_str(text).map_err(|e| crate::location::malformed(text, origin, &e))?;
        scenario
            .validate()
            .map_err(|(field, message)| InputError::Invalid {
                origin: origin.to_owned(),
                location: Some(Location::of_path(text, &field)),
                message,
            })?;
        Ok(scenario)
    }

    /// The scenario as a TOML file that [`Scenario::parse`] reads back.
    pub fn to_toml(&self) -> String {
        // Serializing plain data to TOML only fails on shapes TOML cannot
        // hold (a None inside an array, a non-string map key); these types
        // have none.
        toml::to_string(self).unwrap_or_else(|e| format!("# cannot render as TOML: {e}\n"))
    }

    /// The spec to run: `seed` and `profile` replace the file's when given.
    pub fn spec(&self, seed: Option<u64>, profile: Option<Release>) -> SimSpec {
        let mut spec = self.sim.clone();
        if let Some(seed) = seed {
            spec.seed = seed;
        }
        if let Some(profile) = profile {
            spec.profile = profile;
        }
        spec
    }

    /// What `profile` must give.
    pub fn expectation(&self, profile: Release) -> Expectation {
        self.expect.for_profile(profile)
    }

    /// Checks what serde cannot: sim's rules for the spec (ranges, names,
    /// faults and threads that must happen before the horizon), then the
    /// scenario's own (its name, its expectations). The error names the
    /// field's path; [`Scenario::parse`] turns it into a line.
    fn validate(&self) -> Result<(), (String, String)> {
        if !is_scenario_name(&self.name) {
            return Err((
                "name".to_owned(),
                format!(
                    "scenario name {:?} is not a name (a letter, then up to 63 letters, digits, '_' or '-')",
                    self.name
                ),
            ));
        }
        if let Some(src) = &self.source
            && src.chars().any(char::is_control)
        {
            return Err((
                "source".to_owned(),
                "must be one line without control characters".to_owned(),
            ));
        }
        if self
            .description
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\n' | '\t'))
        {
            return Err((
                "description".to_owned(),
                "must not contain control characters other than line breaks and tabs".to_owned(),
            ));
        }
        sim::validate_spec(&self.sim).map_err(|e| match e {
            SimError::Invalid { field, reason } => (format!("sim.{field}"), reason),
            other => ("sim".to_owned(), other.to_string()),
        })?;
        let names: BTreeSet<&str> = self.sim.clients.iter().map(|c| c.name.as_str()).collect();
        let tables = [
            ("default", self.expect.default.as_ref()),
            ("redisson-legacy", self.expect.redisson_legacy.as_ref()),
            ("redisson", self.expect.redisson.as_ref()),
            ("redisson-batched", self.expect.redisson_batched.as_ref()),
            ("fenced", self.expect.fenced.as_ref()),
        ];
        for (key, e) in tables {
            let Some(e) = e else { continue };
            check_expectation(e, &format!("expect.{key}"), &names)?;
        }
        for (key, e) in &self.expect.release {
            let release = key
                .parse::<lockcore::Release>()
                .map_err(|err| (format!("expect.release.\"{key}\""), err.to_string()))?;
            if release.to_string() != *key {
                return Err((
                    format!("expect.release.\"{key}\""),
                    format!("write the release as \"{release}\""),
                ));
            }
            check_expectation(e, &format!("expect.release.\"{key}\""), &names)?;
        }
        if let Some(row) = &self.history {
            row.check()?;
            for r in row.releases() {
                if !self.expect.release.contains_key(&r.to_string()) {
                    return Err((
                        "history".to_owned(),
                        format!("needs an expectation for {r}: [expect.release.\"{r}\"]"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// A scenario's name: it is printed in headers and used in file names.
fn is_scenario_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn check_expectation(
    e: &Expectation,
    path: &str,
    clients: &BTreeSet<&str>,
) -> Result<(), (String, String)> {
    if let Some(inv) = e.violated.iter().find(|i| e.held.contains(i)) {
        return Err((
            format!("{path}.violated"),
            format!("'{inv}' is listed both as violated and as held"),
        ));
    }
    if e.verdict == Some(crate::Verdict::Safe) && !e.violated.is_empty() {
        return Err((
            format!("{path}.verdict"),
            "verdict is safe but `violated` lists invariants".to_owned(),
        ));
    }
    let mut named: Vec<(String, Option<&str>)> = Vec::new();
    for (i, c) in e.count.iter().enumerate() {
        named.push((format!("{path}.count[{i}]"), c.client.as_deref()));
        if let (Some(a), Some(b)) = (c.min, c.max)
            && a > b
        {
            return Err((
                format!("{path}.count[{i}].min"),
                format!("min ({a}) is greater than max ({b})"),
            ));
        }
    }
    for (i, t) in e.timing.iter().enumerate() {
        named.push((format!("{path}.timing[{i}]"), t.client.as_deref()));
        if let Some(a) = &t.after {
            named.push((format!("{path}.timing[{i}].after"), a.client.as_deref()));
        }
        if let (Some(a), Some(b)) = (t.min_ms, t.max_ms)
            && a > b
        {
            return Err((
                format!("{path}.timing[{i}].min_ms"),
                format!("min_ms ({a}) is greater than max_ms ({b})"),
            ));
        }
    }
    for (at, client) in named {
        if let Some(c) = client
            && !clients.contains(c)
        {
            return Err((
                format!("{at}.client"),
                format!("names unknown client '{c}'"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Location;

    const MINIMAL: &str = r#"
name = "mini"
description = "one client locks and unlocks"

[sim]
seed = 7

[[sim.clients]]
name = "A"

[[sim.clients.threads]]
steps = [
  { step = "lock" },
  { step = "work", ms = 100 },
  { step = "unlock" },
]
"#;

    fn malformed(text: &str) -> (Location, String) {
        match Scenario::parse(text, "test.toml") {
            Err(InputError::Malformed {
                location, message, ..
            }) => (location, message),
            other => panic!("expected a malformed-file error, got {other:?}"),
        }
    }

    /// A minimal file parses; sim's defaults fill what it leaves out, and
    /// a profile without expectations is expected to be safe.
    #[test]
    fn minimal_file_parses_with_defaults() {
        let s = Scenario::parse(MINIMAL, "mini.toml").unwrap();
        assert_eq!(s.sim.seed, 7);
        assert_eq!(s.sim.watchdog_timeout_ms, 30_000);
        assert_eq!(s.sim.latency.min_ms, 1);
        assert_eq!(s.sim.latency.max_ms, 5);
        assert_eq!(s.sim.clients[0].threads[0].steps.len(), 3);
        assert_eq!(s.expectation(Release::FENCED), Expectation::safe());
    }

    /// `--seed` and `--profile` replace the file's values and nothing else.
    #[test]
    fn seed_and_profile_override() {
        let s = Scenario::parse(MINIMAL, "mini.toml").unwrap();
        let spec = s.spec(Some(99), Some(Release::FENCED));
        assert_eq!((spec.seed, spec.profile), (99, Release::FENCED));
        assert_eq!(spec.clients, s.sim.clients);
        assert_eq!(s.spec(None, None), s.sim);
    }

    /// A misspelled field deep inside a step is reported with its line and
    /// its full field path, not just "unknown field".
    #[test]
    fn unknown_field_names_line_and_path() {
        let text = MINIMAL.replace(
            r#"{ step = "work", ms = 100 }"#,
            r#"{ step = "work", msec = 100 }"#,
        );
        let (loc, msg) = malformed(&text);
        assert_eq!(loc.line, 14, "{loc} {msg}");
        assert!(msg.contains("unknown field `msec`"), "{msg}");
        assert_eq!(
            loc.field.as_deref(),
            Some("sim.clients[0].threads[0].steps[1].msec"),
            "{loc}"
        );
    }

    /// A string where a number belongs is reported at the value, with its path.
    #[test]
    fn wrong_type_names_line_and_path() {
        let text = MINIMAL.replace("seed = 7", r#"seed = "seven""#);
        let (loc, msg) = malformed(&text);
        assert_eq!(loc.line, 6, "{loc} {msg}");
        assert_eq!(loc.field.as_deref(), Some("sim.seed"), "{loc}");
        assert!(msg.contains("invalid type"), "{msg}");
        // Inside a step (a buffered, internally tagged enum) too.
        let text = MINIMAL.replace("ms = 100", r#"ms = "100""#);
        let (loc, msg) = malformed(&text);
        assert_eq!(loc.line, 14, "{loc} {msg}");
        assert_eq!(
            loc.field.as_deref(),
            Some("sim.clients[0].threads[0].steps[1].ms"),
            "{loc}"
        );
    }

    /// An unknown top-level key is named, with the keys that were expected.
    #[test]
    fn unknown_top_level_key() {
        let text = format!("nmae = \"x\"\n{MINIMAL}");
        let (loc, msg) = malformed(&text);
        assert_eq!(
            (loc.line, loc.field.as_deref()),
            (1, Some("nmae")),
            "{loc} {msg}"
        );
        assert!(msg.contains("unknown field `nmae`"), "{msg}");
    }

    /// An unknown step kind is reported at its line with the allowed kinds.
    #[test]
    fn unknown_step_kind() {
        let text = MINIMAL.replace(r#"{ step = "lock" }"#, r#"{ step = "grab" }"#);
        let (loc, msg) = malformed(&text);
        assert_eq!(loc.line, 13, "{loc} {msg}");
        assert_eq!(
            loc.field.as_deref(),
            Some("sim.clients[0].threads[0].steps[0].step"),
            "{loc}"
        );
        assert!(msg.contains("grab") && msg.contains("try-lock"), "{msg}");
    }

    /// A profile name that does not exist, as an expectation key, is an
    /// unknown field of `expect` at its header line.
    #[test]
    fn unknown_profile_in_expect() {
        let text = format!("{MINIMAL}\n[expect.redison]\nverdict = \"safe\"\n");
        let (loc, msg) = malformed(&text);
        assert_eq!(loc.line, 18, "{loc} {msg}");
        assert!(msg.contains("unknown field `redison`"), "{msg}");
        assert_eq!(loc.field.as_deref(), Some("expect.redison"), "{loc}");
    }

    /// A missing required field is reported with the table it is missing from.
    #[test]
    fn missing_field() {
        let text = MINIMAL.replace("description = \"one client locks and unlocks\"\n", "");
        let (_, msg) = malformed(&text);
        assert!(msg.contains("missing field `description`"), "{msg}");
    }

    /// Broken TOML syntax gets the line of the break.
    #[test]
    fn syntax_error_has_line() {
        let text = MINIMAL.replace("seed = 7", "seed = = 7");
        let (loc, _) = malformed(&text);
        assert_eq!(loc.line, 6, "{loc}");
    }

    /// A fault that names a client the scenario does not have is rejected
    /// before anything runs.
    #[test]
    fn fault_on_unknown_client() {
        let text =
            format!("{MINIMAL}\n[[sim.faults]]\nfault = \"crash\"\nclient = \"Z\"\nat_ms = 5\n");
        let err = Scenario::parse(&text, "t.toml").unwrap_err();
        assert!(err.to_string().contains("unknown client 'Z'"), "{err}");
    }

    fn invalid(text: &str) -> (Location, String) {
        match Scenario::parse(text, "t.toml") {
            Err(InputError::Invalid {
                location: Some(location),
                message,
                ..
            }) => (location, message),
            other => panic!("expected an invalid-file error, got {other:?}"),
        }
    }

    /// Issue 10: a fault scheduled after the horizon never fires, yet the
    /// run passed "as expected". It is refused, at its line and field.
    #[test]
    fn fault_after_horizon_names_line_and_field() {
        let text = MINIMAL.replace("seed = 7", "seed = 7\nhorizon_ms = 1000")
            + "\n[[sim.faults]]\nfault = \"pause\"\nclient = \"A\"\nat_ms = 5000\nduration_ms = 10\n";
        let (loc, msg) = invalid(&text);
        assert_eq!(loc.field.as_deref(), Some("sim.faults[0].at_ms"), "{msg}");
        assert_eq!(loc.line, 22, "{loc} {msg}");
        assert!(msg.contains("never fire"), "{msg}");
    }

    /// Issue 10: `horizon_ms = 0` ran nothing and passed; a thread that
    /// starts after the horizon never ran. Both are refused.
    #[test]
    fn runs_that_test_nothing_are_refused() {
        let (loc, msg) = invalid(&MINIMAL.replace("seed = 7", "seed = 7\nhorizon_ms = 0"));
        assert_eq!(
            (loc.line, loc.field.as_deref()),
            (7, Some("sim.horizon_ms")),
            "{msg}"
        );
        let text = MINIMAL.replace(
            "[[sim.clients.threads]]",
            "[[sim.clients.threads]]\nstart_ms = 200000",
        );
        let (loc, msg) = invalid(&text);
        assert_eq!(
            (loc.line, loc.field.as_deref()),
            (12, Some("sim.clients[0].threads[0].start_ms")),
            "{msg}"
        );
    }

    /// Issue 9: a failover without replicas, and two failovers at once,
    /// are refused at the fault's line and field.
    #[test]
    fn bad_failovers_name_line_and_field() {
        let failover = "\n[[sim.faults]]\nfault = \"failover\"\nat_ms = 10\nduration_ms = 50\n";
        let (loc, msg) = invalid(&format!("{MINIMAL}{failover}"));
        assert_eq!(loc.field.as_deref(), Some("sim.faults[0].fault"), "{msg}");
        assert_eq!(loc.line, 19, "{loc}");
        assert!(msg.contains("Redis has none"), "{msg}");
        let two = MINIMAL.replace("seed = 7", "seed = 7\nredis = { replicas = 2 }")
            + failover
            + &failover.replace("at_ms = 10", "at_ms = 40");
        let (loc, msg) = invalid(&two);
        assert_eq!(loc.field.as_deref(), Some("sim.faults[1].at_ms"), "{msg}");
        assert_eq!(loc.line, 26, "{loc}");
        assert!(msg.contains("overlaps failover faults[0]"), "{msg}");
    }

    /// Issue 10: a client name with a newline forged timeline lines, and
    /// `B/t1` read as client B's thread 1. Names are identifiers.
    #[test]
    fn client_names_are_identifiers() {
        for bad in ["B/t1", "A\\n--- verdict"] {
            let (loc, msg) =
                invalid(&MINIMAL.replace("name = \"A\"", &format!("name = \"{bad}\"")));
            assert_eq!(loc.field.as_deref(), Some("sim.clients[0].name"), "{msg}");
            assert_eq!(loc.line, 9, "{loc}");
            assert!(msg.contains(sim::NAME_RULE), "{msg}");
        }
    }

    /// Issue 10: a lease of i64::MAX ms broke the key's expiry silently;
    /// it is refused with the accepted range.
    #[test]
    fn lease_out_of_range_gives_the_range() {
        let text = MINIMAL.replace(
            r#"{ step = "lock" }"#,
            r#"{ step = "lock", lease_ms = 9223372036854775807 }"#,
        );
        let (loc, msg) = invalid(&text);
        assert_eq!(
            loc.field.as_deref(),
            Some("sim.clients[0].threads[0].steps[0].lease_ms")
        );
        assert_eq!(loc.line, 13, "{loc}");
        assert!(
            msg.contains(&format!("between 1 and {}", sim::MAX_LEASE_MS)),
            "{msg}"
        );
    }

    /// Contradictory expectations are rejected: an invariant cannot be both
    /// violated and held, and a check cannot name a client that is not there.
    #[test]
    fn contradictory_expectations() {
        let both = format!(
            "{MINIMAL}\n[expect.default]\nviolated = [\"fencing\"]\nheld = [\"fencing\"]\n"
        );
        let err = Scenario::parse(&both, "t.toml").unwrap_err();
        assert!(
            err.to_string().contains("both as violated and as held"),
            "{err}"
        );
        let ghost = format!(
            "{MINIMAL}\n[expect.default]\ncount = [{{ event = \"acquired\", client = \"Q\" }}]\n"
        );
        let err = Scenario::parse(&ghost, "t.toml").unwrap_err();
        assert!(err.to_string().contains("unknown client 'Q'"), "{err}");
    }

    /// A scenario written out as TOML reads back as the same scenario, so
    /// shrunk plans can be saved and rerun as files.
    #[test]
    fn toml_round_trip() {
        for s in crate::builtins() {
            let text = s.to_toml();
            let back = Scenario::parse(&text, "roundtrip")
                .unwrap_or_else(|e| panic!("{}: {e}\n{text}", s.name));
            assert_eq!(back, s);
        }
    }
}

#[cfg(test)]
mod guide_tests {
    use super::*;

    /// The guide's page on scenario files (`docs/src/scenarios.md`).
    const PAGE: &str = include_str!("../../docs/src/scenarios.md");

    /// The page's full example: its first ```` ```toml ```` block, which
    /// follows the `## A complete file` heading.
    fn full_example() -> &'static str {
        let section = &PAGE[PAGE
            .find("## A complete file")
            .expect("the page has a `## A complete file` section")..];
        let start = section.find("```toml\n").expect("a ```toml block") + "```toml\n".len();
        let len = section[start..].find("```").expect("the block ends");
        &section[start..start + len]
    }

    /// The full example in the guide parses, and under every profile it
    /// gives exactly what it says it expects, so the documentation cannot
    /// drift from the format or from the simulator.
    #[test]
    fn guide_example_parses_and_runs_as_expected() {
        let scenario =
            Scenario::parse(full_example(), "scenarios.md").unwrap_or_else(|e| panic!("{e}"));
        for p in Release::ERAS {
            let t = crate::Trial::run(&scenario, None, Some(p)).unwrap();
            assert!(
                t.as_expected(),
                "guide example under {p}: {:?}",
                t.mismatches
            );
        }
    }

    /// The copy of the example that the guide's `locksim run
    /// pause-then-write.toml` runs (`scenarios.in/`, checked by
    /// `tests/docs.rs`) is the example the page shows.
    #[test]
    fn the_guides_runnable_copy_is_the_example_shown() {
        let copy = include_str!("../../docs/src/scenarios.in/pause-then-write.toml");
        assert_eq!(copy, full_example());
    }
}
