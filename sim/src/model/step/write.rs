//! `write`: the protected resource written.

use serde::{Deserialize, Serialize};

use super::Kind;
use crate::model::script::{Emit, Instr};

/// A write to the protected resource, with the thread's fencing token
/// when it has one.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct Write {}

impl Kind for Write {
    fn emit(&self, out: &mut Emit) {
        out.push(Instr::Write);
    }
}
