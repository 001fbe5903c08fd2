//! `write-while-held`: the extension recipe's worked example of an
//! invariant, built in sim's tests alone. Every accepted write to the
//! protected resource comes from a thread that believes it holds the lock
//! (a [`RecordKind::Hold`] not yet ended by its [`RecordKind::Release`]).
//! A checker is one pure function of the history, and one line under
//! `@tests` in `invariants!` registers it; the test below judges the
//! histories of all three engines with it.

use lockcore::{LockName, VecMap};

use crate::judge::check::work::Count;
use crate::model::history::{RecordKind, Who};
use crate::{History, Invariant, Violation};

pub(crate) fn check(history: &History, work: &impl Count) -> Vec<Violation> {
    let mut holding: VecMap<(&Who, &LockName), ()> = VecMap::default();
    let mut found = Vec::new();
    for (i, r) in work.records(history) {
        match &r.kind {
            RecordKind::Hold { who, lock, .. } => {
                holding.insert((who, lock), ());
            }
            RecordKind::Release { who, lock, .. } => {
                holding.remove(&(who, lock));
            }
            RecordKind::Write {
                who,
                lock,
                accepted: true,
                ..
            } if holding.get(&(who, lock)).is_none() => {
                found.push(Violation::new(
                    Invariant::WriteWhileHeld,
                    r.at,
                    [who.client.clone()],
                    format!("{who} wrote behind {lock} without holding it"),
                    vec![i],
                ));
            }
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use crate::steps;
    use crate::run::tests::{client, critical, spec, thread};
    use crate::{Invariant, RealRedis, RedisTarget, Run, Step};

    /// A writes without taking the lock, B inside its critical section:
    /// on every engine the checker finds A's write alone.
    #[test]
    fn one_checker_judges_every_engine() {
        let s = spec(vec![
            client("A", vec![thread(0, vec![Step::Write(steps::Write {})])]),
            client("B", vec![thread(100, critical(1_000))]),
        ]);
        let real = RealRedis {
            target: RedisTarget::Spawn,
            time_scale: 10,
        };
        let runs: [(&str, Run); 3] = [
            ("fast", crate::run(&s).expect("the fast engine runs it")),
            ("turmoil", crate::run_turmoil(&s).expect("turmoil runs it")),
            (
                "redis",
                crate::run_real(&s, &real).unwrap_or_else(|e| {
                    panic!("the real-Redis engine needs redis-server on PATH (apt-get install redis-server): {e}")
                }),
            ),
        ];
        for (engine, r) in &runs {
            let found = Invariant::WriteWhileHeld.check(&r.history);
            assert_eq!(found.len(), 1, "{engine}: {found:?}\n{}", r.history);
            assert_eq!(found[0].clients, vec!["A".to_owned()], "{engine}");
            // Not one of the invariants every run checks.
            assert!(!Invariant::ALL.contains(&Invariant::WriteWhileHeld));
            assert!(Invariant::TESTS.contains(&Invariant::WriteWhileHeld));
        }
    }
}
