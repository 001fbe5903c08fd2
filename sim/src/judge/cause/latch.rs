//! Unlock errors that a lost unlock latch explains.

use lockcore::Switch;

use crate::{Case, History, SimSpec, SimTime, Violation};

/// An unlock Redis ran, then refused as not held by a later attempt (a
/// retry for unsynced replicas), under a release whose unlock leaves a
/// latch for its later attempts (3.24+, #4871): the latch was gone when
/// the later attempt came. It goes with Redis's data (a restart, a
/// failover or switchover, a stop that comes back empty; fenced seeds 716
/// and 1673), or
/// it expired, `(timeout + retryInterval) x retryAttempts` (from 3.48:
/// `(timeout + a jittered pause) x retryAttempts`) after the unlock ran, before the attempt came: early, because Redis's clock
/// jumped forward (fenced seed 1934), or because a fault held the
/// attempt back (a starved client's retry timers fire late: seed 8135).
/// A latch that expires with nothing to blame stays a defect.
pub(super) fn latch_lost<'s>(
    spec: &'s SimSpec,
    history: &History,
    v: &'s Violation,
) -> Option<(String, &'s crate::Fault)> {
    // The unlock ran: its record is the violation's second event.
    if v.case != Case::UnlockRan {
        return None;
    }
    let c = spec
        .clients
        .iter()
        .position(|c| v.clients.iter().any(|n| **n == *c.name))?;
    let config = crate::model::config::client_config(spec, c).ok()?;
    if !config.release.has(Switch::UnlockLatch) {
        return None;
    }
    let ran = history.records.get(*v.events.get(1)?)?.at.as_ms();
    let end = v.at.as_ms();
    let within = |f: &&crate::Fault| (ran..=end).contains(&f.at_ms());
    // A switchover promotes a replica with what it had received, as a
    // failover does: a latch written during a replication stall is not
    // on it (4.7.0 seed 10455).
    let gone = spec.faults.0.iter().filter(within).find(|f| match f {
        f if f.restarts_redis() || f.promotes_replica() => true,
        crate::Fault::RedisDown(d) => !d.keep_data,
        _ => false,
    });
    if let Some(f) = gone {
        let why = format!(
            "Redis lost the unlock's latch between its attempts ({} at {})",
            f.text(),
            SimTime::from_ms(f.at_ms())
        );
        return Some((why, f));
    }
    let jumped: i64 = spec
        .faults
        .0
        .iter()
        .filter(within)
        .map(forward_jump_ms)
        .sum();
    // From 3.48 the TTL is drawn per unlock; the history does not keep it,
    // so a latch counts as expired once even the shortest it could have
    // had ran out (and a fault held the attempt back, below).
    let ttl = config.latch_ttl_range().0.0;
    if (end - ran).saturating_add(jumped.unsigned_abs()) < ttl {
        return None;
    }
    let jump = spec
        .faults
        .0
        .iter()
        .filter(within)
        .find(|f| forward_jump_ms(f) > 0);
    let f = match jump {
        Some(f) => f,
        None => super::faults_on(spec, v, ran, end).next()?,
    };
    let why = format!(
        "the unlock's latch ({ttl} ms) expired before its later attempt read it ({} at {})",
        f.text(),
        SimTime::from_ms(f.at_ms())
    );
    Some((why, f))
}

/// How far a fault moves Redis's clock forward.
fn forward_jump_ms(f: &crate::Fault) -> i64 {
    match f {
        crate::Fault::ClockJump(j) => j.jump_ms.max(0),
        _ => 0,
    }
}
