//! `force-unlock`: the release whoever holds.

use lockcore::Call;
use serde::{Deserialize, Serialize};

use super::Kind;

/// `forceUnlock()`: the lock deleted whoever holds it.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct ForceUnlock {}

impl Kind for ForceUnlock {
    fn call(&self) -> Option<Call> {
        Some(Call::ForceUnlock)
    }
}
