//! `locksim completions SHELL`: the shell's completion script, made by
//! clap_complete from the same clap definition that parses the arguments,
//! so it cannot fall behind a new subcommand or flag.

use std::io::Write;

use clap::CommandFactory;

use crate::InputError;
use clap::Args;

use crate::cli::{Cli, Execute, Exit, Io};

/// Print a shell's completion script for locksim to stdout.
///
/// For example `locksim completions bash >
/// ~/.local/share/bash-completion/completions/locksim`.
#[derive(Debug, Args, PartialEq)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}


impl Execute for CompletionsArgs {
    fn execute(&self, io: &mut Io<'_>) -> Result<Exit, InputError> {
        completions(self, io.out)
    }
}

/// Prints the completion script of `args.shell` to `out`.
pub(super) fn completions(args: &CompletionsArgs, out: &mut dyn Write) -> Result<Exit, InputError> {
    clap_complete::generate(args.shell, &mut Cli::command(), "locksim", out);
    Ok(Exit::AsExpected)
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser, ValueEnum};
    use clap_complete::Shell;

    use crate::cli::{Cli, Exit, execute};

    /// The subcommands the parser knows, `help` included.
    fn subcommands() -> Vec<String> {
        let cli = Cli::command();
        let mut names: Vec<String> = cli
            .get_subcommands()
            .map(|c| c.get_name().to_owned())
            .collect();
        names.push("help".to_owned());
        names
    }

    /// Whether `script` has `name` as a word of its own (`run`, not the
    /// `run` in `--runs`).
    fn mentions(script: &str, name: &str) -> bool {
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '-');
        script.match_indices(name).any(|(at, _)| {
            !word(script[..at].chars().next_back())
                && !word(script[at + name.len()..].chars().next())
        })
    }

    /// Every shell clap_complete supports gets a script, and the script
    /// offers every subcommand: a shell missing from the value list, an
    /// empty script or a subcommand left out of it fails here.
    #[test]
    fn every_shell_completes_every_subcommand() {
        let names = subcommands();
        assert!(names.len() > 5, "{names:?}");
        for shell in Shell::value_variants() {
            let shell = shell.to_possible_value().unwrap();
            let cli = Cli::try_parse_from(["locksim", "completions", shell.get_name()]).unwrap();
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let exit = execute(&cli, &mut out, &mut err);
            let script = String::from_utf8(out).unwrap();
            assert_eq!(exit, Exit::AsExpected, "{}", shell.get_name());
            assert!(!script.trim().is_empty(), "{}", shell.get_name());
            for name in &names {
                assert!(
                    mentions(&script, name),
                    "{}'s script does not offer `{name}`",
                    shell.get_name()
                );
            }
        }
    }

    /// The five shells the issue names are the ones offered.
    #[test]
    fn the_five_shells_are_offered() {
        let offered: Vec<String> = Shell::value_variants()
            .iter()
            .map(|s| s.to_possible_value().unwrap().get_name().to_owned())
            .collect();
        for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
            assert!(offered.iter().any(|o| o == shell), "{offered:?}");
        }
        assert!(Cli::try_parse_from(["locksim", "completions", "tcsh"]).is_err());
    }
}
