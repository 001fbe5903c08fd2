//! How `explore` tells a stopped sweep's user to go on: the command that
//! explores the rest with the same settings, its words quoted for a shell.

use std::borrow::Cow;

use super::{DEFAULT_SHRINK, ExploreOptions, PlanFormat};
use crate::SeedRange;

/// The command that explores `rest` with the same settings as `o`
/// (settings left at their defaults are left out, as the user likely did).
pub(super) fn resume_command(o: &ExploreOptions, rest: SeedRange) -> String {
    let mut cmd = format!(
        "locksim explore --from {} --seeds {}",
        rest.from(),
        rest.count()
    );
    if let Some(p) = o.profile {
        cmd.push_str(&format!(" {}", p.flags()));
    }
    if o.shrink != DEFAULT_SHRINK {
        cmd.push_str(&format!(" --shrink {}", o.shrink));
    }
    if o.format == PlanFormat::Json {
        cmd.push_str(" --format json");
    }
    cmd.push_str(&o.workload.flags());
    // explore's default is the portfolio, so a uniform sweep says so.
    if o.workload.strategy == sim::Strategy::Uniform {
        cmd.push_str(" --strategy uniform");
    }
    cmd.push_str(&crate::engine_flag(&o.engine));
    for (flag, dir) in [("--save", &o.save), ("--report", &o.report)] {
        if let Some(dir) = dir {
            cmd.push_str(&format!(
                " {flag} {}",
                shell_word(&dir.display().to_string())
            ));
        }
    }
    cmd
}

/// `word` as one shell word: as it is when it holds nothing a shell
/// would split or expand, else single-quoted.
pub(crate) fn shell_word(word: &str) -> Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,:=@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(format!("'{}'", word.replace('\'', r"'\''")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;

    /// The resume command keeps every setting that is not the default, and
    /// quotes a path the shell would split.
    #[test]
    fn resume_command_keeps_the_settings() {
        let cli = Cli::try_parse_from([
            "locksim",
            "explore",
            "--strategy",
            "uniform",
            "--seeds",
            "50",
            "--profile",
            "fenced",
            "--shrink",
            "0",
            "--format",
            "json",
            "--save",
            "my plans/it's",
            "--kinds",
            "all",
        ])
        .unwrap();
        let crate::cli::Command::Explore(args) = cli.command else {
            panic!("not explore")
        };
        assert_eq!(
            resume_command(&args.options().unwrap(), SeedRange::new(20, 30).unwrap()),
            r"locksim explore --from 20 --seeds 30 --profile fenced --shrink 0 --format json --kinds all --strategy uniform --save 'my plans/it'\''s'"
        );
    }
}
