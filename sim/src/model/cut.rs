//! What the horizon cut short: threads still working when the run
//! stopped. A run that ends with a thread mid-script did not test the
//! rest of that script, and a verdict must say so rather than pass.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::history::Who;

/// A thread still working at the horizon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CutShort {
    /// The thread.
    pub who: Who,
    /// What it was doing: `lock()` (a call waiting for its answer) or
    /// `work or sleep`.
    pub doing: String,
    /// How many steps of its script never ran (repeats expanded), the
    /// one in progress included.
    pub steps_not_run: u64,
    /// The kinds of those steps (`lock`, `try-lock`, `unlock`, `write`,
    /// ...), sorted: an expectation counting their events cannot hold.
    pub kinds_not_run: Vec<String>,
}

impl fmt::Display for CutShort {
    /// `thread B/t1 still working at the horizon (in lock(); 2 steps not run: lock, unlock)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "thread {} still working at the horizon (in {}; {} step{} not run: {})",
            self.who,
            self.doing,
            self.steps_not_run,
            if self.steps_not_run == 1 { "" } else { "s" },
            self.kinds_not_run.join(", ")
        )
    }
}
