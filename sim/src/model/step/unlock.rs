//! `unlock`: the release.

use lockcore::Call;
use serde::{Deserialize, Serialize};

use super::Kind;

/// `unlock()`: one hold less, and the lock released with the last.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct Unlock {}

impl Kind for Unlock {
    fn call(&self) -> Option<Call> {
        Some(Call::Unlock)
    }
}
