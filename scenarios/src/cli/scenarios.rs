//! `locksim scenarios`: the built-in scenarios, one line each.

use std::io::Write;

use clap::Args;

use crate::InputError;
use crate::cli::{Execute, Exit, Io};

/// List the built-in scenarios, one line each.
#[derive(Debug, Args, PartialEq)]
pub struct ScenariosArgs {}

impl Execute for ScenariosArgs {
    fn execute(&self, io: &mut Io<'_>) -> Result<Exit, InputError> {
        list(io.out);
        Ok(Exit::AsExpected)
    }
}

/// Prints each scenario's name and the first sentence of its description.
fn list(out: &mut dyn Write) {
    let all = crate::builtins();
    let width = all.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for s in all {
        let first = s
            .description
            .split(". ")
            .next()
            .unwrap_or("")
            .trim_end_matches('.');
        let _ = writeln!(out, "{:<width$}  {first}.", s.name);
    }
}
