//! `locksim schema`: the JSON Schema of scenario files.

use clap::Args;

use crate::InputError;
use crate::cli::{Execute, Exit, Io};

/// Print the JSON Schema of scenario files (for an editor's TOML support;
/// a copy is checked in as docs/scenario.schema.json).
#[derive(Debug, Args, PartialEq)]
pub struct SchemaArgs {}

impl Execute for SchemaArgs {
    fn execute(&self, io: &mut Io<'_>) -> Result<Exit, InputError> {
        let _ = io.out.write_all(crate::scenario_schema().as_bytes());
        Ok(Exit::AsExpected)
    }
}
