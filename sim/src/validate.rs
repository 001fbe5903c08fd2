//! Spec validation: a bad spec gets a clear error, never a panic or a hang.

use std::collections::BTreeSet;

use crate::script::expanded_len;
use crate::{Fault, SimError, SimSpec};

/// The longest latency or delay a spec may ask for: an hour of virtual time.
const MAX_DELAY_MS: u64 = 3_600_000;

/// The longest run: a day of virtual time (a watchdog renews for ever,
/// so the horizon bounds the work of every run).
const MAX_HORIZON_MS: u64 = 86_400_000;

/// The most instructions one thread may execute (repeats expanded), so a
/// zero-time loop cannot run for ever.
const MAX_SCRIPT_LEN: u64 = 1_000_000;

/// Checks `spec` before anything runs.
pub(crate) fn validate(spec: &SimSpec) -> Result<(), SimError> {
    let invalid = |msg: String| Err(SimError::InvalidSpec(msg));
    if spec.clients.is_empty() {
        return invalid("a spec needs at least one client".to_owned());
    }
    if spec.watchdog_timeout_ms < 3 {
        return invalid(format!(
            "watchdog timeout must be at least 3 ms (renewal runs every third of it), got {} ms",
            spec.watchdog_timeout_ms
        ));
    }
    if spec.horizon_ms > MAX_HORIZON_MS {
        return invalid(format!(
            "horizon must be at most a day ({MAX_HORIZON_MS} ms), got {} ms",
            spec.horizon_ms
        ));
    }
    check_range("latency", spec.latency.min_ms, spec.latency.max_ms)?;
    let mut names = BTreeSet::new();
    for c in &spec.clients {
        if c.name.is_empty() {
            return invalid("a client name must not be empty".to_owned());
        }
        if !names.insert(c.name.as_str()) {
            return invalid(format!("client name '{}' is used twice", c.name));
        }
        if c.threads.is_empty() {
            return invalid(format!("client '{}' has no threads", c.name));
        }
        if let Some(w) = c.watchdog_timeout_ms
            && w < 3
        {
            return invalid(format!(
                "client '{}': watchdog timeout must be at least 3 ms, got {w} ms",
                c.name
            ));
        }
        for (i, t) in c.threads.iter().enumerate() {
            if expanded_len(&t.steps) > MAX_SCRIPT_LEN {
                return invalid(format!(
                    "client '{}' thread {}: script runs more than {MAX_SCRIPT_LEN} steps",
                    c.name,
                    i + 1
                ));
            }
        }
    }
    for f in &spec.faults.0 {
        if let Some(client) = f.client()
            && !names.contains(client)
        {
            return Err(SimError::UnknownClient(client.to_owned()));
        }
        match f {
            Fault::Starve {
                min_delay_ms,
                max_delay_ms,
                ..
            } => check_range("starve delay", *min_delay_ms, *max_delay_ms)?,
            Fault::Latency { min_ms, max_ms, .. } => {
                check_range("latency fault", *min_ms, *max_ms)?
            }
            Fault::DropRate { probability, .. } if !(0.0..=1.0).contains(probability) => {
                return invalid(format!(
                    "drop probability must be between 0 and 1, got {probability}"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

fn check_range(what: &str, min: u64, max: u64) -> Result<(), SimError> {
    if min > max {
        return Err(SimError::InvalidSpec(format!(
            "{what}: min {min} ms is greater than max {max} ms"
        )));
    }
    if max > MAX_DELAY_MS {
        return Err(SimError::InvalidSpec(format!(
            "{what}: max {max} ms is more than an hour ({MAX_DELAY_MS} ms)"
        )));
    }
    Ok(())
}
