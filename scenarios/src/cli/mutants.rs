//! `locksim mutants`: the mutation yardstick's flags, handed to
//! [`crate::mutants::mutation_sweep`].


use clap::Args;
use lockcore::Release;

use crate::cli::flags::{StrategyArg, parse_profile};
use crate::cli::{Execute, Exit, Io};
use crate::mutants::{MutantsOptions, mutation_sweep, render_report};
use crate::{InputError, SeedRange};

/// Remove each fix of a release alone and explore it: which mutants the
/// search kills, and after how many seeds.
///
/// Exit 0 when every mutant is killed or equivalent, 1 when one survived,
/// 2 on bad input, 130 when stopped by Ctrl-C.
#[derive(Debug, Args, PartialEq)]
pub struct MutantsArgs {
    /// The release whose fixes are removed one at a time: a Redisson
    /// version or an era name.
    #[arg(long, visible_alias = "profile", value_parser = parse_profile, default_value = "4.7.0")]
    pub redisson: Release,
    /// How many seeds each mutant is explored on.
    #[arg(long, default_value_t = 10_000)]
    pub seeds: u64,
    /// The first seed.
    #[arg(long, default_value_t = 0)]
    pub from: u64,
    /// Stop exploring a mutant at its first kill (faster; its counts then
    /// cover only the seeds up to the kill).
    #[arg(long)]
    pub first: bool,
    /// Threads to run seeds on (0: one per core). The output is the same
    /// whatever the number.
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// How each seed's scenario is drawn (as `explore --strategy`).
    #[arg(long, value_enum, default_value_t = StrategyArg::Portfolio)]
    pub strategy: StrategyArg,
    /// Print one JSON object (each mutant's verdict and counts, the score)
    /// instead of the table.
    #[arg(long)]
    pub json: bool,
}

impl MutantsArgs {
    /// The library's options these flags ask for.
    pub fn options(&self) -> Result<MutantsOptions, InputError> {
        let range = SeedRange::new(self.from, self.seeds)?;
        let mut options = MutantsOptions::new(self.redisson, range)?;
        options.first = self.first;
        options.strategy = self.strategy.strategy();
        Ok(options)
    }
}

impl Execute for MutantsArgs {
    fn execute(&self, io: &mut Io<'_>) -> Result<Exit, InputError> {
        let options = self.options()?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.threads)
            .build()
            .map_err(|e| InputError::Threads(e.to_string()))?;
        let report = mutation_sweep(&pool, &options, io.interrupt, |_| {});
        let text = match self.json {
            true => serde_json::to_string(&report).unwrap_or_default() + "\n",
            false => render_report(&report),
        };
        let _ = io.out.write_all(text.as_bytes());
        Ok(if report.interrupted {
            Exit::Interrupted
        } else if report.survived > 0 {
            Exit::Unexpected
        } else {
            Exit::AsExpected
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Exit, execute};
    use clap::Parser;

    fn exec(args: &[&str]) -> (Exit, String, String) {
        let cli = Cli::try_parse_from(std::iter::once("locksim").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let exit = execute(&cli, &mut out, &mut err);
        let text = |b: Vec<u8>| String::from_utf8(b).expect("UTF-8");
        (exit, text(out), text(err))
    }

    /// An empty range, a range past `u64::MAX` and a release with no fix
    /// are bad input: exit 2, one line on stderr, nothing on stdout; an
    /// unknown release is refused by the parser with the known ones.
    #[test]
    fn bad_input_exits_2_with_a_reason() {
        let cases: [(&[&str], &str); 3] = [
            (&["mutants", "--seeds", "0"], "locksim: --seeds 0 explores nothing"),
            (
                &["mutants", "--from", "18446744073709551615", "--seeds", "2"],
                "locksim: --from 18446744073709551615 --seeds 2 runs past the last seed",
            ),
            (
                &["mutants", "--redisson", "3.0.0", "--seeds", "1"],
                "locksim: 3.0.0 has no fix in force to remove",
            ),
        ];
        for (args, starts) in cases {
            let (exit, out, err) = exec(args);
            assert_eq!((exit, out.as_str()), (Exit::BadInput, ""), "{args:?}");
            assert!(err.starts_with(starts), "{args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        let err = Cli::try_parse_from(["locksim", "mutants", "--redisson", "4.9.0"]).unwrap_err();
        assert!(err.to_string().contains("out of range"), "{err}");
    }

    /// `--json` is one object whose counts add up and whose mutants are
    /// 4.7.0's fixes; the table and the JSON agree on the score, and
    /// neither depends on `--threads`.
    #[test]
    fn json_and_text_agree_whatever_the_threads() {
        let args = ["mutants", "--seeds", "40", "--first"];
        let (exit, json, _) = exec(&[&args[..], &["--json", "--threads", "1"]].concat());
        assert_ne!(exit, Exit::BadInput);
        assert_eq!(json.lines().count(), 1, "{json}");
        let (_, json2, _) = exec(&[&args[..], &["--json", "--threads", "2"]].concat());
        assert_eq!(json, json2);
        let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        let mutants = v["mutants"].as_array().expect("mutants");
        assert_eq!(mutants.len(), crate::mutants::mutants_of("4.7.0".parse().unwrap()).len());
        let sum = ["killed", "equivalent", "survived"]
            .iter()
            .map(|k| v[k].as_u64().expect("a count"))
            .sum::<u64>();
        assert_eq!(sum as usize, mutants.len());
        let (exit_text, text, _) = exec(&args);
        assert_eq!(exit, exit_text);
        let killed = v["killed"].as_u64().unwrap();
        assert!(
            text.contains(&format!("score: {killed}/{} killed", mutants.len())),
            "{text}"
        );
        assert_eq!(exit, if v["survived"] == 0 { Exit::AsExpected } else { Exit::Unexpected });
    }
}
