//! A failover that lost a key whose client sent its lock scripts unsynced
//! because it misread the server (#6775).
//!
//! From 3.46 a client probes `WAIT 0 0` and `WAITAOF 0 0 0` once and
//! syncs every later lock script by what it read (lockcore's
//! `Event::SyncProbed`). A lock script followed by `WAIT` answers only
//! once a replica has the key (or fails with "None of slaves were
//! synced"), so a failover to that replica keeps the key. A client that
//! reads the server as one without `WAIT` sends its scripts bare, and a
//! failover can then promote a replica the key never reached. On a server
//! that really has no `WAIT` that is the deployment's limit, beyond the
//! guarantee; on one that has it (every Redis modelled), the client threw
//! the guarantee away: 3.48.0-3.51.x match the refused `WAITAOF`'s text
//! for "WAIT" on Redis 6.2-7.1, until 3.52.0 (`probe-reads-causes`).

use crate::model::history::RecordKind;
use crate::{History, SimSpec, Violation};

/// Whether the failover's loss of the violation's first hold is the
/// lock's: the holder's client had read its probe as a server without
/// `WAIT` before the hold began, and the deployment's Redis has one.
/// `false` when the client read it right, or never probed.
pub(super) fn misread_sync(spec: &SimSpec, history: &History, v: &Violation) -> bool {
    let Some(&first) = v.events.iter().min() else {
        return false;
    };
    let Some(RecordKind::Hold { who, .. }) = history.records.get(first).map(|r| &r.kind) else {
        return false;
    };
    let process = who.process();
    let read_wait = history.records[..first]
        .iter()
        .rev()
        .find_map(|r| match &r.kind {
            RecordKind::Lock {
                process: p,
                event: lockcore::Event::SyncProbed { wait, .. },
            } if *p == process => Some(*wait),
            _ => None,
        });
    read_wait == Some(false) && spec.redis.version.has_wait()
}
