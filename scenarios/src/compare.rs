//! One scenario on two engines, side by side: whether their verdicts agree
//! and how far apart their key events fall (`locksim compare`).
//!
//! Two engines agree on a run when they break the same invariants with
//! the same causes, and when each key event (a thread starts or stops
//! believing it holds a lock, a key expires) happens on both, as often,
//! within [`Comparison::tolerance_ms`]. The tolerance is what the engines
//! may honestly differ by: each message's latency is drawn by a different
//! generator (the fast engine's uniform draw, turmoil's exponential one,
//! delivered on its 1 ms ticks), so every event that waits for a round
//! trip can move by a few latencies. Against a real Redis, each event may
//! also be late by [`REAL_JITTER_MS`] of real scheduling, magnified by the
//! time scale.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use lockcore::Release;
use serde::Serialize;
use sim::{Engine, History, RecordKind, ServerCause, SimTime};

use crate::{InputError, Scenario, Trial};

/// What every event may differ by, on top of four one-way latencies.
pub const BASE_TOLERANCE_MS: u64 = 20;

/// Real time a process on a loaded machine may lose per event against a
/// real Redis; the tolerance grows by it times the time scale.
pub const REAL_JITTER_MS: u64 = 10;

/// A key event of a history: its label and when.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyEvent {
    /// What happened (`A/t1 acquires redisson:lock`).
    pub what: String,
    /// When, in ms (to the µs).
    pub at_ms: f64,
}

/// One key event on both engines.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyRow {
    /// What happened.
    pub what: String,
    /// When on the first engine, if it happened there.
    pub first_ms: Option<f64>,
    /// When on the second engine, if it happened there.
    pub second_ms: Option<f64>,
    /// Whether both have it, within the tolerance.
    pub agrees: bool,
}

/// A scenario run on two engines.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// The two trials, in engine order.
    pub trials: [Trial; 2],
    /// The key events side by side.
    pub rows: Vec<KeyRow>,
    /// How far apart a key event may fall on the two engines.
    pub tolerance_ms: u64,
}

impl Comparison {
    /// Runs `scenario` on the fast engine and on `other`.
    pub fn run(
        scenario: &Scenario,
        seed: Option<u64>,
        profile: Option<Release>,
        other: Engine,
    ) -> Result<Comparison, InputError> {
        let fast = Trial::run_on(scenario, seed, profile, Engine::Fast)?;
        let second = Trial::run_on(scenario, seed, profile, other)?;
        Ok(Comparison::of(fast, second))
    }

    /// Compares two finished trials of one spec.
    pub fn of(first: Trial, second: Trial) -> Comparison {
        let jitter = match &second.engine {
            Engine::Redis(real) => REAL_JITTER_MS * real.time_scale,
            _ => 0,
        };
        // Two engines' timings differ by a few ms, so a timer can fall in
        // adjacent ticks of Redisson's timer wheel on them: a tick apart.
        let meta = &first.run.history.meta;
        let tolerance_ms =
            BASE_TOLERANCE_MS + 4 * meta.max_latency_ms + meta.max_timer_tick_ms + jitter;
        let rows = rows(
            &key_events(&first.run.history),
            &key_events(&second.run.history),
            tolerance_ms,
        );
        Comparison {
            trials: [first, second],
            rows,
            tolerance_ms,
        }
    }

    /// Each engine's broken invariants with their causes, sorted.
    pub fn verdicts(&self) -> [Vec<String>; 2] {
        self.trials.each_ref().map(|t| {
            let mut v: Vec<String> = t
                .outcome
                .broken
                .iter()
                .map(|b| format!("{} ({})", b.invariant.name(), b.cause.name()))
                .collect();
            v.sort();
            v.dedup();
            v
        })
    }

    /// Whether the verdicts and every key event agree.
    pub fn agrees(&self) -> bool {
        let [a, b] = self.verdicts();
        a == b && self.rows.iter().all(|r| r.agrees)
    }

    /// The side-by-side text `locksim compare` prints.
    pub fn render(&self) -> String {
        let [a, b] = &self.trials;
        let mut s = String::new();
        let _ = writeln!(s, "scenario  {}", a.scenario);
        let _ = writeln!(s, "seed      {}", a.seed);
        let _ = writeln!(s, "profile   {}", a.profile);
        let _ = writeln!(s);
        let (ea, eb) = (a.engine.to_string(), b.engine.to_string());
        let _ = writeln!(s, "{:<44} {:>12} {:>12}", "", ea, eb);
        let [va, vb] = self.verdicts();
        let _ = writeln!(
            s,
            "{:<44} {:>12} {:>12}",
            "verdict",
            a.verdict().to_string(),
            b.verdict().to_string()
        );
        for v in va.iter().chain(vb.iter().filter(|v| !va.contains(v))) {
            let mark = |list: &Vec<String>| if list.contains(v) { "yes" } else { "no" };
            let _ = writeln!(s, "  {v:<42} {:>12} {:>12}", mark(&va), mark(&vb));
        }
        let _ = writeln!(s);
        let _ = writeln!(s, "key events (tolerance {} ms)", self.tolerance_ms);
        let time = |t: Option<f64>| t.map_or("-".to_owned(), |ms| format!("{:.3}s", ms / 1000.0));
        for r in &self.rows {
            let _ = writeln!(
                s,
                "  {:<42} {:>12} {:>12}{}",
                r.what,
                time(r.first_ms),
                time(r.second_ms),
                if r.agrees { "" } else { "  DIFFERS" }
            );
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "{}",
            if self.agrees() {
                "the engines agree".to_owned()
            } else {
                format!("the engines DISAGREE: {}", self.disagreements().join("; "))
            }
        );
        s
    }

    /// What differs, in a few words each.
    pub fn disagreements(&self) -> Vec<String> {
        let [va, vb] = self.verdicts();
        let mut out = Vec::new();
        if va != vb {
            out.push(format!(
                "verdicts [{}] vs [{}]",
                va.join(", "),
                vb.join(", ")
            ));
        }
        out.extend(
            self.rows
                .iter()
                .filter(|r| !r.agrees)
                .map(|r| r.what.clone()),
        );
        out
    }

    /// The object `locksim compare --json` prints.
    pub fn to_json(&self) -> serde_json::Value {
        let [a, b] = &self.trials;
        let [va, vb] = self.verdicts();
        serde_json::json!({
            "scenario": a.scenario,
            "seed": a.seed,
            "profile": a.profile.to_string(),
            "engines": [a.engine, b.engine],
            "verdicts": [a.verdict(), b.verdict()],
            "violations": [va, vb],
            "tolerance_ms": self.tolerance_ms,
            "key_events": self.rows,
            "agree": self.agrees(),
        })
    }
}

fn ms(at: SimTime) -> f64 {
    at.0 as f64 / 1000.0
}

/// The key events of a history, in time order.
pub fn key_events(history: &History) -> Vec<KeyEvent> {
    history
        .records
        .iter()
        .filter_map(|r| {
            let what = match &r.kind {
                RecordKind::Hold { who, lock, .. } => format!("{who} acquires {lock}"),
                RecordKind::Release { who, lock, cause } => {
                    format!("{who} lets go {lock} ({})", release_word(*cause))
                }
                RecordKind::Server {
                    lock,
                    cause: ServerCause::Expiry,
                    ..
                } => format!("{lock} expires"),
                _ => return None,
            };
            Some(KeyEvent {
                what,
                at_ms: ms(r.at),
            })
        })
        .collect()
}

fn release_word(cause: sim::ReleaseCause) -> &'static str {
    match cause {
        sim::ReleaseCause::Unlock => "unlock",
        sim::ReleaseCause::Crash => "crash",
        sim::ReleaseCause::LeaseLost => "lease lost",
    }
}

/// Pairs the n-th occurrence of each label on one side with the n-th on
/// the other, in the first side's order (then the second's leftovers).
fn rows(a: &[KeyEvent], b: &[KeyEvent], tolerance_ms: u64) -> Vec<KeyRow> {
    let mut by_label: BTreeMap<&str, std::collections::VecDeque<f64>> = BTreeMap::new();
    for e in b {
        by_label.entry(&e.what).or_default().push_back(e.at_ms);
    }
    let mut out: Vec<KeyRow> = a
        .iter()
        .map(|e| {
            let other = by_label
                .get_mut(e.what.as_str())
                .and_then(|q| q.pop_front());
            KeyRow {
                what: e.what.clone(),
                first_ms: Some(e.at_ms),
                second_ms: other,
                agrees: other.is_some_and(|o| (o - e.at_ms).abs() <= tolerance_ms as f64),
            }
        })
        .collect();
    for e in b {
        if let Some(q) = by_label.get_mut(e.what.as_str())
            && q.front() == Some(&e.at_ms)
        {
            q.pop_front();
            out.push(KeyRow {
                what: e.what.clone(),
                first_ms: None,
                second_ms: Some(e.at_ms),
                agrees: false,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(what: &str, at_ms: f64) -> KeyEvent {
        KeyEvent {
            what: what.to_owned(),
            at_ms,
        }
    }

    /// Occurrences pair in order; a shift beyond the tolerance and an
    /// event on one side only both disagree.
    #[test]
    fn rows_pair_occurrences_and_flag_differences() {
        let a = [event("x", 0.0), event("y", 100.0), event("x", 200.0)];
        let b = [event("x", 5.0), event("x", 260.0), event("z", 300.0)];
        let r = rows(&a, &b, 50);
        let flags: Vec<(&str, bool)> = r.iter().map(|r| (r.what.as_str(), r.agrees)).collect();
        assert_eq!(
            flags,
            vec![("x", true), ("y", false), ("x", false), ("z", false)]
        );
        assert_eq!(r[1].second_ms, None);
        assert_eq!(r[3].first_ms, None);
    }
}
