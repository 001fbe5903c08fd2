//! Which threads the horizon cut short ([`crate::CutShort`]), read off
//! the processes (the hosted engines read theirs the same way).

use std::collections::BTreeSet;

use crate::CutShort;
use crate::engines::fast::process::{Process, Thread};
use crate::model::history::Who;
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
            // The cursor stays past a call until it returns.
            kinds.insert(thread.program.step_at(thread.cursor.pc.wrapping_sub(1)));
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
    while cursor.next(&thread.program).is_some() {
        steps += 1;
        kinds.insert(thread.program.step_at(cursor.pc - 1));
    }
    CutShort {
        who,
        doing,
        steps_not_run: steps,
        kinds_not_run: kinds.into_iter().map(str::to_owned).collect(),
    }
}
