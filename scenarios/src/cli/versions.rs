//! `locksim versions`: the release model as a table.

use std::io::Write;

use lockcore::{Era, Release, Switch, Version};

use crate::InputError;
use clap::Args;

use crate::cli::flags::{Toggles, parse_profile};
use crate::cli::{Execute, Exit, Io};

/// List the Redisson behaviour switches (version, upstream issue, what
/// changes), or the ones a release has.
#[derive(Debug, Args, PartialEq)]
pub struct VersionsArgs {
    /// Mark the switches in force for this release (an era name or a
    /// Redisson version).
    #[arg(long, visible_alias = "redisson", value_parser = parse_profile)]
    pub profile: Option<Release>,
    /// Switches toggled on the release.
    #[command(flatten)]
    pub toggles: Toggles,
}


impl Execute for VersionsArgs {
    fn execute(&self, io: &mut Io<'_>) -> Result<Exit, InputError> {
        versions(self, io.out)
    }
}

/// Prints every switch with its release and upstream issue; with a
/// release, marks those in force and names its bookkeeping.
pub(super) fn versions(args: &VersionsArgs, out: &mut dyn Write) -> Result<Exit, InputError> {
    let release = args.toggles.apply(args.profile)?;
    let _ = writeln!(
        out,
        "Redisson releases modelled: {} to {} and 3.0.0 to {} (2.N.p runs the lock code of 3.(N-5).p)",
        Version::OLDEST,
        Version::NEWEST_2X,
        Version::NEWEST
    );
    let _ = writeln!(
        out,
        "eras: {}",
        Era::ALL
            .iter()
            .map(|e| format!("{e} = {}", alias(*e)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(r) = release {
        let _ = writeln!(
            out,
            "{r}: renewal bookkeeping of {} ('x' = in force)",
            r.bookkeeping()
        );
    }
    let _ = writeln!(out);
    for &w in Switch::ALL {
        let info = w.info();
        let mark = match release {
            Some(r) if r.has(w) => "x ",
            Some(_) => "  ",
            None => "",
        };
        let since = info.since.map_or("locksim".to_owned(), |v| v.to_string());
        let _ = writeln!(
            out,
            "{mark}{:<28} {:>8}  {:<16} {}",
            info.name, since, info.upstream, info.summary
        );
    }
    Ok(Exit::AsExpected)
}

fn alias(era: Era) -> String {
    let release = Release::from(era);
    if release.has(Switch::Fencing) {
        format!("{} + fencing", era.version())
    } else {
        era.version().to_string()
    }
}
