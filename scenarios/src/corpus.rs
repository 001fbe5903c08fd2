//! The regression corpus: explored seeds, each with the outcome it must
//! keep giving (verdict, exactly which invariants break, and the history
//! hash). `tests/regression/seeds.toml` is one; the regression test replays
//! every entry.

use lockcore::Release;
use serde::{Deserialize, Serialize};
use sim::Invariant;

use crate::{InputError, Outcome, Verdict};

/// A list of regression seeds.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Corpus {
    /// The entries, as `[[case]]` tables.
    #[serde(default, rename = "case")]
    pub cases: Vec<SeedCase>,
}

/// One explored seed and what it must give.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedCase {
    /// The seed of `locksim explore` (`sim::generate(seed, Some(profile))`).
    pub seed: u64,
    /// The profile it runs under.
    pub profile: Release,
    /// Safe or violated.
    pub verdict: Verdict,
    /// Exactly the invariants that break.
    #[serde(default)]
    pub violated: Vec<Invariant>,
    /// The history hash, when the entry pins the whole run.
    #[serde(default)]
    pub history: Option<String>,
    /// What the run shows, and why it is kept.
    pub note: String,
}

impl Corpus {
    /// Parses a corpus file; errors carry line and field like scenario files.
    pub fn parse(text: &str, origin: &str) -> Result<Corpus, InputError> {
        toml::from_str(text).map_err(|e| crate::location::malformed(text, origin, &e))
    }
}

impl SeedCase {
    /// Replays the seed; every way the run differs from the entry, one line each.
    pub fn check(&self) -> Vec<String> {
        let run = match crate::explore_seed(self.seed, Some(self.profile)) {
            Ok(run) => run,
            Err(e) => return vec![format!("the spec no longer runs: {e}")],
        };
        let outcome = Outcome::of(&run);
        let mut out = Vec::new();
        if outcome.verdict() != self.verdict {
            out.push(format!(
                "verdict: expected {}, got {}",
                self.verdict,
                outcome.verdict()
            ));
        }
        let broken = outcome.broken_invariants();
        let mut want = self.violated.clone();
        want.sort();
        want.dedup();
        if broken != want {
            let names = |v: &[Invariant]| v.iter().map(|i| i.name()).collect::<Vec<_>>().join(", ");
            out.push(format!(
                "violated: expected [{}], got [{}]",
                names(&want),
                names(&broken)
            ));
        }
        if let Some(h) = &self.history {
            let got = run.history.hash();
            if *h != got {
                out.push(format!("history hash: expected {h}, got {got}"));
            }
        }
        out
    }

    /// The command that shows the run (the corpus's seeds are drawn with
    /// the classic workload, [`sim::Workload::CLASSIC`]).
    pub fn replay_command(&self) -> String {
        format!(
            "locksim replay {} {}{}",
            self.seed,
            self.profile.flags(),
            sim::Workload::CLASSIC.flags()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry parses with its profile and invariants by name, and a typo
    /// is reported at its line and field.
    #[test]
    fn parse_and_errors() {
        let c = Corpus::parse(
            "[[case]]\nseed = 3\nprofile = \"fenced\"\nverdict = \"violated\"\nviolated = [\"fencing\"]\nnote = \"x\"\n",
            "c.toml",
        )
        .unwrap();
        assert_eq!(c.cases[0].profile, Release::FENCED);
        assert_eq!(c.cases[0].violated, vec![Invariant::Fencing]);
        let err = Corpus::parse("[[case]]\nseed = 3\nprofle = \"fenced\"\n", "c.toml").unwrap_err();
        let InputError::Malformed { location, .. } = err else {
            panic!("{err:?}")
        };
        assert_eq!(
            (location.line, location.field.as_deref()),
            (3, Some("case[0].profle"))
        );
    }

    /// A wrong entry is caught: the replayed run differs and says how.
    #[test]
    fn wrong_entry_is_reported() {
        let case = SeedCase {
            seed: 0,
            profile: Release::REDISSON,
            verdict: Verdict::Safe,
            violated: vec![],
            history: Some("0".repeat(40)),
            note: String::new(),
        };
        let m = case.check();
        assert!(m.iter().any(|l| l.starts_with("history hash")), "{m:?}");
    }
}
