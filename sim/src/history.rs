//! The history: everything an all-seeing observer saw, in virtual-time order.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::SimTime;

/// What the observer recorded. `Display` renders the timeline, one line per
/// event, virtual time first.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct History {
    // The sim issue defines the records.
}

/// An unlock that failed, as the calling thread saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnlockError {
    /// When the error was returned.
    pub at: SimTime,
    /// The client, by name.
    pub client: String,
    /// The thread.
    pub thread: u64,
    /// The error text (Redisson's, exactly, for a lock not held).
    pub message: String,
}

impl History {
    /// A stable hash of the whole history (hex SHA1 of its canonical JSON):
    /// the same seed and spec give the same hash.
    pub fn hash(&self) -> String {
        todo!("sim issue")
    }

    /// Every failed unlock, in order.
    pub fn unlock_errors(&self) -> Vec<UnlockError> {
        todo!("sim issue")
    }
}

impl fmt::Display for History {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let _ = f;
        todo!("sim issue")
    }
}
