//! `work`: the thread busy, holding what it holds.

use serde::{Deserialize, Serialize};

use super::{Invalid, Kind, duration};
use crate::model::script::{Emit, Instr};

/// Work: the thread is busy for this long in virtual time. A pause does not add to it: work due to end during a stop-the-world pause or starvation ends when the process runs again.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct Work {
    /// How long, in ms.
    #[schemars(range(max = crate::MAX_HORIZON_MS))]
    pub ms: u64,
}

impl Kind for Work {
    fn emit(&self, out: &mut Emit) {
        out.push(Instr::Busy(self.ms));
    }

    fn check(&self) -> Result<(), Invalid> {
        duration(self.ms)
    }
}
