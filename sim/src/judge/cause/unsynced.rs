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
//! for "WAIT" on Redis 6.2-7.1, until 3.52.0 (`probe-reads-causes`), and
//! 3.46.0-3.51.x send the probing script itself bare there.
//!
//! From 3.18.1 the `WAIT` asks for the replicas `INFO` counted connected,
//! a count kept from 3.27.0 until a `WAIT` counts differently. A client
//! whose count is below the replicas connected at its acquire waits for
//! some of them only, and a failover to another loses its key: the
//! client's doing too (#6518).

use crate::model::history::RecordKind;
use crate::{Fault, History, SimSpec, SimTime, Violation};

/// Whether the failover's loss of the violation's first hold is the
/// lock's, on a deployment whose Redis has `WAIT`: the holder's client had
/// read its probe as a server without `WAIT` before the hold began, or
/// the hold's own acquire was the script that probed and went bare
/// ([`probed_bare`]). `false` when the client read it right and synced
/// the acquire, or never probed.
pub(super) fn misread_sync(spec: &SimSpec, history: &History, v: &Violation) -> bool {
    let Some(&first) = v.events.iter().min() else {
        return false;
    };
    let Some(RecordKind::Hold { who, .. }) = history.records.get(first).map(|r| &r.kind) else {
        return false;
    };
    let read_wait = history.last_event_before(&who.process(), first, |e| match e {
        lockcore::Event::SyncProbed { wait, .. } => Some(*wait),
        _ => None,
    });
    spec.redis.version.has_wait() && (read_wait == Some(false) || probed_bare(history, who, first))
}

/// Whether the acquire that began hold `hold` went out bare as the script
/// that probed: 3.46.0-3.51.x send the script whose probe found `WAITAOF`
/// missing without `WAIT` (`probe-reads-causes` keeps `WAIT` from 3.52.0),
/// so on Redis 6.2-7.1 a client's first lock script is unsynced. Its
/// client's probe was answered, bare, inside the thread's call: a script
/// sent in the call before the client knew waited for a probe of its own,
/// and every probe of one server is read alike.
fn probed_bare(history: &History, who: &crate::Who, hold: usize) -> bool {
    let records = &history.records[..hold.min(history.records.len())];
    let Some(call) = records
        .iter()
        .rposition(|r| matches!(&r.kind, RecordKind::Call { who: w, .. } if w == who))
    else {
        return false;
    };
    let process = who.process();
    records[call..].iter().any(|r| {
        matches!(
            &r.kind,
            RecordKind::Lock {
                process: p,
                event: lockcore::Event::SyncProbed {
                    wait: true,
                    bare: true,
                    ..
                },
            } if *p == process
        )
    })
}

/// Whether the holder's client asked its `WAIT` for fewer replicas than
/// the primary had connected when the violation's first hold began: its
/// last `INFO` reading before the hold (lockcore's
/// `Event::ReplicasCounted`) counted fewer than the replicas whose link
/// was up then. A failover can then promote a connected replica the key
/// never reached, which a `WAIT` for every connected replica rules out:
/// a count kept after replicas came back (3.27.0-3.45.x, #6518), or a
/// count of 0, which no later `WAIT` can correct (3.27.0 on). `false`
/// before 3.18.1, which reads no count, and when the key reached every
/// replica anyway ([`reached_every_replica`]).
pub(super) fn waited_for_too_few(spec: &SimSpec, history: &History, v: &Violation) -> bool {
    let Some(&first) = v.events.iter().min() else {
        return false;
    };
    let Some(hold) = history.records.get(first) else {
        return false;
    };
    let RecordKind::Hold { who, .. } = &hold.kind else {
        return false;
    };
    let counted = history.last_event_before(&who.process(), first, |e| match e {
        lockcore::Event::ReplicasCounted { connected } => Some(*connected),
        _ => None,
    });
    let at = hold.at.as_ms();
    let down = spec
        .faults
        .0
        .iter()
        .filter_map(|f| match f {
            Fault::ReplicaDown(d) if f.covers_ms(at) => Some(d.replica),
            _ => None,
        })
        .collect::<std::collections::BTreeSet<u32>>()
        .len();
    let connected = (spec.redis.replicas as usize).saturating_sub(down);
    counted.is_some_and(|c| (c as usize) < connected)
        && !reached_every_replica(spec, history, first, hold.at)
}

/// Whether the hold's acquire reached every replica whatever its `WAIT`
/// asked: nothing that holds replication back (a stall, a replica down,
/// the primary failing) struck between the thread's acquire call and one
/// replication lag after the hold. The failover then lost the key some
/// other way: a replica's copy that expired because renewals made during
/// a later stall never reached it (4.7.0 seed 515307: A locked at 62.45
/// s, both replicas had the key by 62.46 s, replication stalled from
/// 64.6 s, and the replica promoted at 72.6 s had the key's TTL of 62.45
/// s: expired).
fn reached_every_replica(spec: &SimSpec, history: &History, hold: usize, at: SimTime) -> bool {
    let Some(RecordKind::Hold { who, .. }) = history.records.get(hold).map(|r| &r.kind) else {
        return false;
    };
    let Some(from) = super::called_at(history, who, hold) else {
        return false;
    };
    let to = at.as_ms().saturating_add(spec.redis.replication_lag.max_ms);
    !spec.faults.0.iter().any(|f| {
        let holds_back =
            f.promotes_replica() || matches!(f, Fault::ReplicationDrop(_) | Fault::ReplicaDown(_));
        let end = f.end_ms().unwrap_or(f.at_ms());
        holds_back && f.at_ms() <= to && end >= from
    })
}
