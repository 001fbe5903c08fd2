//! What in a configuration and usage breaks the lock whatever the
//! release: the guarantee's own preconditions, not defects.

use lockcore::MAX_TIMER_TICK;

use super::{AuditOptions, Sweep};

/// A round trip on a local network (the envelope's default latency, 1-5
/// ms each way, at its longest).
const ROUND_TRIP_MS: u64 = 10;

/// Each misuse found, one line each.
pub fn misuse(o: &AuditOptions, found: &Sweep) -> Vec<String> {
    let mut out = Vec::new();
    let w = o.settings.watchdog_timeout_ms;
    // The watchdog renews every third of the timeout, up to a timer tick
    // late, and the renewal needs a round trip: below that the key
    // expires between renewals with no fault at all.
    let floor = 3 * (MAX_TIMER_TICK.0 + ROUND_TRIP_MS);
    if w <= floor {
        out.push(format!(
            "lockWatchdogTimeout {w} ms: the watchdog renews every {} ms, which a timer tick ({} ms at most) plus a round trip can outlast; keep it well above {floor} ms",
            w / 3,
            MAX_TIMER_TICK.0
        ));
    }
    if let Some(usage) = &o.tailor.0
        && let (Some(lease), Some(work)) = (usage.lease_ms, usage.work_ms)
        && lease <= work
    {
        out.push(format!(
            "a lease of {lease} ms is not longer than the work of {work} ms: the key expires while the thread works, and another thread takes the lock; use the watchdog (no lease) or a lease well beyond the work"
        ));
    }
    if let Some(&n) = found.by_cause.get("misuse")
        && n > 0
    {
        out.push(format!(
            "{n} of {} explored runs broke the lock through their use of it (the oracle's misuse)",
            found.runs
        ));
    }
    out
}
