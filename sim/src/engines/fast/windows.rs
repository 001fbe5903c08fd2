//! Which client fault windows cover an instant, in plan order, without
//! scanning the whole plan for every message and timer: a run's cost must
//! grow with its events, not with events times faults (10,000 latency
//! windows once made a 1-second run take 28).

use std::collections::BTreeSet;

use crate::Fault;

/// Per client, a sweep over its windows in start order. Simulated time
/// only moves forward, so each window enters and leaves the active set
/// once.
#[derive(Debug)]
pub(crate) struct Windows {
    clients: Vec<Sweep>,
    /// Entries touched so far (work, not time: tests bound it).
    visits: u64,
    /// The last answer, reused so a query allocates nothing.
    found: Vec<usize>,
}

#[derive(Debug)]
struct Sweep {
    /// (start ms, end ms, fault index), by start then plan order.
    pending: Vec<(u64, u64, usize)>,
    next: usize,
    /// The windows that have started and not yet ended, by plan index.
    active: BTreeSet<(usize, u64)>,
    /// The earliest end among `active` (`u64::MAX` when none): most
    /// queries fall where no window starts or ends, and skip the sweep.
    first_end: u64,
    /// The last instant asked about.
    now_ms: u64,
    /// Whether any of its windows makes timers late (a starvation).
    delays_timers: bool,
}

impl Windows {
    /// Indexes the windowed faults of `faults` that hit one of `clients`.
    pub(crate) fn new(faults: &[Fault], clients: &[String]) -> Windows {
        let mut sweeps: Vec<Sweep> = clients
            .iter()
            .map(|_| Sweep {
                pending: Vec::new(),
                next: 0,
                active: BTreeSet::new(),
                first_end: u64::MAX,
                now_ms: 0,
                delays_timers: false,
            })
            .collect();
        for (i, f) in faults.iter().enumerate() {
            let (Some(name), Some(end)) = (f.client(), f.end_ms()) else {
                continue;
            };
            if matches!(f, Fault::Crash(crate::model::fault::Crash { .. })) {
                continue;
            }
            if let Some(c) = clients.iter().position(|n| n == name) {
                sweeps[c].pending.push((f.at_ms(), end, i));
                sweeps[c].delays_timers |= f.kind().timer_delay().is_some();
            }
        }
        for s in &mut sweeps {
            s.pending.sort_unstable();
        }
        Windows {
            clients: sweeps,
            visits: 0,
            found: Vec::new(),
        }
    }

    /// Whether any window of client `c` makes its timers late: most
    /// clients have none, and their timers and wake-ups need not ask
    /// which windows cover them (skipping a query changes no later
    /// answer: the sweep catches up on the next).
    pub(crate) fn delays_timers(&self, c: usize) -> bool {
        self.clients.get(c).is_some_and(|s| s.delays_timers)
    }

    /// The indexes of client `c`'s windows covering `now_ms` (`at <= now
    /// < end`), in plan order. `now_ms` never goes back between calls.
    pub(crate) fn covering(&mut self, c: usize, now_ms: u64) -> &[usize] {
        self.found.clear();
        let Some(s) = self.clients.get_mut(c) else {
            return &self.found;
        };
        debug_assert!(now_ms >= s.now_ms, "simulated time went back");
        s.now_ms = now_ms;
        while let Some(&(at, end, i)) = s.pending.get(s.next) {
            if at > now_ms {
                break;
            }
            s.active.insert((i, end));
            s.first_end = s.first_end.min(end);
            s.next += 1;
            self.visits += 1;
        }
        if s.first_end <= now_ms {
            self.visits += s.active.len() as u64;
            s.active.retain(|&(_, end)| end > now_ms);
            s.first_end = s
                .active
                .iter()
                .map(|&(_, end)| end)
                .min()
                .unwrap_or(u64::MAX);
        }
        // Most messages go where no window is open: an empty set's
        // iterator is not free.
        if !s.active.is_empty() {
            self.visits += s.active.len() as u64;
            self.found.extend(s.active.iter().map(|&(i, _)| i));
        }
        &self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 10: every message and timer scanned the whole plan, so 10,000
    /// latency windows made a 1-second run take 28 s. Each window is now
    /// touched once when it starts, and each query touches only the
    /// windows open at the time.
    #[test]
    fn work_grows_with_windows_plus_queries() {
        let n = 10_000u64;
        let faults: Vec<Fault> = (0..n).map(|k| pause("A", k * 10, 5)).collect();
        let mut w = Windows::new(&faults, &["A".to_owned()]);
        let queries = 100_000u64;
        for q in 0..queries {
            let _ = w.covering(0, q);
        }
        assert!(w.visits <= 2 * n + queries, "{} visits", w.visits);
    }

    /// Only a client with a starvation window has its timers asked
    /// about: a pause, another client's starvation or no fault at all
    /// leaves them alone.
    #[test]
    fn only_starvation_delays_timers() {
        let starve = Fault::Starve(crate::model::fault::Starve {
            client: "B".into(),
            at_ms: 10,
            duration_ms: 5,
            min_delay_ms: 1,
            max_delay_ms: 2,
        });
        let clients = ["A".to_owned(), "B".to_owned(), "C".to_owned()];
        let w = Windows::new(&[pause("A", 0, 5), starve], &clients);
        let delays: Vec<bool> = (0..4).map(|c| w.delays_timers(c)).collect();
        assert_eq!(delays, vec![false, true, false, false]);
    }

    fn pause(client: &str, at_ms: u64, duration_ms: u64) -> Fault {
        Fault::Pause(crate::model::fault::Pause {
            client: client.into(),
            at_ms,
            duration_ms,
        })
    }

    /// The answer is what scanning the plan with `covers_ms` gives, for
    /// every instant, overlapping windows and other clients included.
    #[test]
    fn same_as_scanning_the_plan() {
        let faults = vec![
            pause("A", 10, 5),
            pause("B", 0, 100),
            pause("A", 12, 1),
            pause("A", 5, 20),
            Fault::RedisPause(crate::model::fault::RedisPause {
                at_ms: 0,
                duration_ms: 50,
            }),
            Fault::Crash(crate::model::fault::Crash {
                client: "A".into(),
                at_ms: 11,
                restart_after_ms: Some(5),
            }),
        ];
        let names = vec!["A".to_owned(), "B".to_owned()];
        let mut w = Windows::new(&faults, &names);
        for now in 0..40 {
            for (c, name) in names.iter().enumerate() {
                let want: Vec<usize> = faults
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| {
                        f.client() == Some(name.as_str())
                            && !matches!(f, Fault::Crash(crate::model::fault::Crash { .. }))
                            && f.covers_ms(now)
                    })
                    .map(|(i, _)| i)
                    .collect();
                assert_eq!(w.covering(c, now), want, "{name} at {now}");
            }
        }
    }
}
