//! `repeat`: a block of steps run several times.

use serde::{Deserialize, Serialize};

use super::{Invalid, Kind, Step};
use crate::model::script::{self, Emit};

/// Runs `steps` `times` times. A failed acquire inside skips the rest of
/// its round, not of the repeat.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Repeat {
    /// How many rounds.
    #[schemars(range(min = 1))]
    pub times: u32,
    /// The round's steps.
    #[schemars(length(min = 1))]
    pub steps: Vec<Step>,
}

impl Kind for Repeat {
    fn emit(&self, out: &mut Emit) {
        out.repeat(self.times, &self.steps);
    }

    fn check(&self) -> Result<(), Invalid> {
        if self.times == 0 {
            let why = "a repeat of 0 times runs nothing; remove it or give at least 1";
            return Err(("times", why.to_owned()));
        }
        if self.steps.is_empty() {
            return Err(("steps", "the repeat has no steps".to_owned()));
        }
        Ok(())
    }

    fn body(&self) -> &[Step] {
        &self.steps
    }

    fn body_mut(&mut self) -> Option<&mut Vec<Step>> {
        Some(&mut self.steps)
    }

    fn instructions(&self) -> usize {
        2 + script::instructions(&self.steps)
    }

    fn expanded_len(&self) -> u64 {
        let round = script::expanded_len(&self.steps).saturating_add(1);
        u64::from(self.times).saturating_mul(round)
    }
}
