//! Which threads the horizon cut short ([`crate::CutShort`]), read off
//! the processes (the hosted engines read theirs the same way).

use std::collections::BTreeSet;

use crate::CutShort;
use crate::engines::fast::process::{Process, Thread};
use crate::model::history::Who;
use crate::model::script::Instr;
use crate::model::timeline::call_text;

/// Every thread of a live process that has not finished its script.
/// A crashed process's threads are not cut short: the crash ended them.
pub(crate) fn cut_short(procs: &[Process]) -> Vec<CutShort> {
    let mut out = Vec::new();
    for p in procs.iter().filter(|p| p.alive) {
        for (t, thread) in p.threads.iter().enumerate() {
            if !thread.done {
                out.push(of_thread(p.who(t), thread));
            }
        }
    }
    out
}

pub(crate) fn of_thread(who: Who, thread: &Thread) -> CutShort {
    let mut kinds = BTreeSet::new();
    let mut steps = 0u64;
    let doing = match &thread.pending {
        Some((call, _)) => {
            steps += 1;
            kinds.insert(call_kind(call));
            call_text(call)
        }
        None if thread.sleeping => {
            steps += 1;
            "work or sleep".to_owned()
        }
        None => "its script".to_owned(),
    };
    // The rest of the script, as the thread would run it if every call
    // succeeded: bounded by validation's limit on steps.
    let mut cursor = thread.cursor.clone();
    while let Some(instr) = cursor.next(&thread.program) {
        steps += 1;
        kinds.insert(instr_kind(instr));
    }
    CutShort {
        who,
        doing,
        steps_not_run: steps,
        kinds_not_run: kinds.into_iter().map(str::to_owned).collect(),
    }
}

fn call_kind(call: &lockcore::Call) -> &'static str {
    match call {
        lockcore::Call::Lock { .. } | lockcore::Call::LockInterruptibly { .. } => "lock",
        lockcore::Call::TryLock { .. } => "try-lock",
        lockcore::Call::LockAsync { .. } => "lock-async",
        lockcore::Call::TryLockAsync { .. } => "try-lock-async",
        lockcore::Call::Unlock => "unlock",
        lockcore::Call::ForceUnlock => "force-unlock",
        _ => "query",
    }
}

/// The scenario-file name of an instruction's step.
fn instr_kind(instr: Instr) -> &'static str {
    match instr {
        Instr::Lock {
            asynchronous: true, ..
        } => "lock-async",
        Instr::Lock { .. } => "lock",
        Instr::TryLock {
            asynchronous: true, ..
        } => "try-lock-async",
        Instr::TryLock { .. } => "try-lock",
        Instr::Work(_) => "work",
        Instr::Write => "write",
        Instr::Unlock => "unlock",
        Instr::ForceUnlock => "force-unlock",
        Instr::Sleep(_) => "sleep",
        Instr::Loop { .. } | Instr::EndLoop { .. } => "repeat",
    }
}
