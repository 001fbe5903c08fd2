//! `sleep`: the thread asleep.

use serde::{Deserialize, Serialize};

use super::{Invalid, Kind, duration};
use crate::model::script::{Emit, Instr};

/// `Thread.sleep`: the thread waits this long, as work does.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct Sleep {
    /// How long, in ms.
    #[schemars(range(max = crate::MAX_HORIZON_MS))]
    pub ms: u64,
}

impl Kind for Sleep {
    fn emit(&self, out: &mut Emit) {
        out.push(Instr::Busy(self.ms));
    }

    fn check(&self) -> Result<(), Invalid> {
        duration(self.ms)
    }
}
