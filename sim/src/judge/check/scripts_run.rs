//! `scripts-run`: every lock script a call sends runs to its end. A call
//! that Redis answers with an error raised inside the script (a Lua
//! runtime error such as #4153's and #5989's "attempt to compare nil
//! with number", or a command the script calls refusing its arguments,
//! #7089's negative `PX`) failed on the lock's own code: Redisson's
//! scripts must take any state Redis can hold, a queue entry without its
//! deadline included, as its fixes for those issues do.

use lockcore::VecMap;

use crate::judge::check::work::Count;
use crate::model::history::{Outcome, RecordKind};
use crate::model::name::Name;
use crate::{History, Invariant, Violation};

pub(crate) fn check(history: &History, work: &impl Count) -> Vec<Violation> {
    let mut open: VecMap<(Name<'_>, u32, u64), usize> = VecMap::new();
    let mut found = Vec::new();
    for (i, r) in work.records(history) {
        match &r.kind {
            RecordKind::Call { who, .. } => {
                open.insert((Name(&who.client), who.life, who.thread), i);
            }
            RecordKind::Return {
                who,
                lock,
                call,
                outcome: Outcome::Error {
                    message,
                    script: true,
                },
            } => {
                let mut events: Vec<usize> = open
                    .get(&(Name(&who.client), who.life, who.thread))
                    .copied()
                    .into_iter()
                    .collect();
                events.push(i);
                found.push(Violation::new(
                    Invariant::ScriptsRun,
                    r.at,
                    [who.client.clone()],
                    format!(
                        "{who}'s {} on {lock} failed inside its script: {message}",
                        crate::model::timeline::call_text(call)
                    ),
                    events,
                ));
            }
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use lockcore::Call;

    use crate::judge::check::sample::{Sample, who};
    use crate::model::history::Outcome;
    use crate::{Invariant, SimTime};

    fn failed(script: bool) -> Outcome {
        Outcome::Error {
            message: "ERR user_script:1: attempt to compare nil with number script: 762bfafa6be221431a0b668685dd15c926483619, on @user_script:1.".into(),
            script,
        }
    }

    /// A lock() failed inside its script is one violation, citing the call
    /// and its answer; the same text without the script's mark (a reply
    /// Redis gave before running it) is not judged.
    #[test]
    fn a_call_failed_inside_its_script_breaks_it() {
        for (script, expected) in [(true, 1), (false, 0)] {
            let lock = Call::Lock { lease: None };
            let h = Sample::new(5)
                .call(100, who("A", 1), lock.clone())
                .ret(200, who("A", 1), lock, failed(script))
                .build();
            let found = Invariant::ScriptsRun.check(&h);
            assert_eq!(found.len(), expected, "{found:?}");
            if let Some(v) = found.first() {
                assert_eq!(v.at, SimTime::from_ms(200));
                assert_eq!(v.events.len(), 2);
            }
        }
    }
}
