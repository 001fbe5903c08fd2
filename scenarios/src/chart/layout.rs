//! What a chart shows, before any drawing: lanes, bars, marks and rules,
//! each tied to the history record it comes from. Pure data, so the chart's
//! logic is tested without parsing SVG.

use std::collections::BTreeMap;

use lockcore::Call;
use sim::{Outcome, Phase, RecordKind, ReleaseCause, Run, SimTime};

/// Colours of clients, by their order in the spec.
pub(crate) const PALETTE: [&str; 6] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948",
];

/// The colour of fault windows.
pub(crate) const FAULT: &str = "#bab0ac";

/// How a point event is drawn; the legend lists them in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Glyph {
    /// A renewal sent (small grey dot); a resend is hollow.
    RenewSent,
    /// A renewal replied 1 (green dot).
    Renewed,
    /// A renewal replied 0: the key was not ours (orange triangle).
    RenewMissed,
    /// A renewal failed on the wire (red cross).
    RenewError,
    /// The watchdog stopped renewing (red square).
    RenewStopped,
    /// `fenced`: the holder learned its lease was lost (purple diamond).
    LeaseLost,
    /// The resource accepted a write (black square).
    WriteAccepted,
    /// The resource rejected a stale write (red X).
    WriteRejected,
    /// An unlock failed (red downward triangle).
    UnlockError,
    /// A process crashed (black X).
    Crash,
}

impl Glyph {
    /// The legend's words for it.
    pub(crate) fn meaning(self) -> &'static str {
        match self {
            Glyph::RenewSent => "renewal sent",
            Glyph::Renewed => "renewal -> 1",
            Glyph::RenewMissed => "renewal -> 0 (not held)",
            Glyph::RenewError => "renewal failed",
            Glyph::RenewStopped => "renewal stopped",
            Glyph::LeaseLost => "lease lost",
            Glyph::WriteAccepted => "write accepted",
            Glyph::WriteRejected => "write rejected",
            Glyph::UnlockError => "unlock error",
            Glyph::Crash => "crash",
        }
    }
}

/// A span on a lane: a belief, Redis's holder, or a fault window.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bar {
    pub(crate) lane: usize,
    pub(crate) from: SimTime,
    pub(crate) to: SimTime,
    pub(crate) color: &'static str,
    /// Text drawn on the bar (a fault's kind, target and length).
    pub(crate) label: Option<String>,
    /// The tooltip.
    pub(crate) title: String,
    /// The record that opened it.
    pub(crate) record: usize,
}

/// A point event on a lane.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mark {
    pub(crate) lane: usize,
    pub(crate) at: SimTime,
    pub(crate) glyph: Glyph,
    /// A resend (drawn hollow).
    pub(crate) hollow: bool,
    /// Text drawn beside it (a write's token).
    pub(crate) label: Option<String>,
    pub(crate) title: String,
    pub(crate) record: usize,
}

/// A broken invariant: a vertical rule across every lane.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rule {
    pub(crate) at: SimTime,
    /// The invariant and its cause, drawn at the top:
    /// `mutual-exclusion: beyond guarantee (pause A 45s)`.
    pub(crate) label: String,
    /// Nothing in the run explains it (drawn solid and red; an expected
    /// loss, beyond the guarantee or a misuse, dashed and grey).
    pub(crate) defect: bool,
    /// The row of its label, so labels of nearby rules do not overlap.
    pub(crate) row: usize,
    /// The label runs left of the rule (it would pass the chart's end).
    pub(crate) leftward: bool,
    /// The tooltip: the checker's detail and the oracle's whole reason.
    pub(crate) title: String,
    pub(crate) records: Vec<usize>,
}

/// Everything a chart shows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layout {
    pub(crate) end: SimTime,
    pub(crate) lanes: Vec<String>,
    pub(crate) bars: Vec<Bar>,
    pub(crate) marks: Vec<Mark>,
    pub(crate) rules: Vec<Rule>,
    /// The glyphs present, for the legend.
    pub(crate) glyphs: Vec<Glyph>,
}

/// A fault's one-line label: `pause A 45s`, `redis restart`.
fn fault_label(fault: &sim::Fault) -> String {
    let (kind, fields) = crate::render::fault_fields(fault);
    let mut who = String::new();
    let (mut length, mut size) = (String::new(), String::new());
    for (k, d) in &fields {
        match (k.as_str(), d.as_str()) {
            ("client", c) => who = format!(" {c}"),
            ("duration_ms", d) => length = format!(" {}", seconds(d)),
            ("restart_after_ms", d) => length = format!(" restart after {}", seconds(d)),
            // How far a clock moves is what a reader weighs against the
            // lease: `clock-jump +26s`.
            ("jump_ms" | "skew_ms", d) => {
                let (sign, ms) = d.strip_prefix('-').map_or(("+", d), |m| ("-", m));
                size = format!(" {sign}{}", seconds(ms));
            }
            ("drift_ppm", d) if d.starts_with('-') => size = format!(" {d}ppm"),
            ("drift_ppm", d) => size = format!(" +{d}ppm"),
            _ => {}
        }
    }
    format!("{kind}{who}{size}{length}")
}

fn seconds(ms: &str) -> String {
    match ms.parse::<u64>() {
        Ok(ms) if ms.is_multiple_of(1_000) => format!("{}s", ms / 1_000),
        Ok(ms) => format!("{}.{:03}s", ms / 1_000, ms % 1_000),
        Err(_) => format!("{ms}ms"),
    }
}

/// Lays out `run`: lanes for faults, Redis's holder, then each process's
/// watchdog followed by its threads, in order of first appearance.
pub(crate) fn layout(run: &Run) -> Layout {
    let mut b = Builder::new(run);
    for (i, r) in run.history.iter() {
        b.record(i, r.at, &r.kind);
    }
    b.finish(run)
}

struct Builder {
    end: SimTime,
    clients: Vec<String>,
    lanes: Vec<String>,
    lane_of: BTreeMap<String, usize>,
    bars: Vec<Bar>,
    marks: Vec<Mark>,
    holding: BTreeMap<String, (SimTime, &'static str, String, usize)>,
    redis: Option<(SimTime, &'static str, String, usize)>,
    faults: BTreeMap<String, (SimTime, usize, String)>,
}

impl Builder {
    fn new(run: &Run) -> Builder {
        Builder {
            end: run.history.meta.horizon.max(SimTime(1)),
            clients: run.spec.clients.iter().map(|c| c.name.clone()).collect(),
            lanes: vec!["redis holder".to_owned()],
            lane_of: BTreeMap::from([("redis holder".to_owned(), 0)]),
            bars: Vec::new(),
            marks: Vec::new(),
            holding: BTreeMap::new(),
            redis: None,
            faults: BTreeMap::new(),
        }
    }

    fn color(&self, client: &str) -> &'static str {
        let i = self.clients.iter().position(|c| c == client).unwrap_or(0);
        PALETTE[i % PALETTE.len()]
    }

    fn lane(&mut self, name: String) -> usize {
        if let Some(&l) = self.lane_of.get(&name) {
            return l;
        }
        self.lanes.push(name.clone());
        self.lane_of.insert(name, self.lanes.len() - 1);
        self.lanes.len() - 1
    }

    fn mark(&mut self, lane: usize, at: SimTime, glyph: Glyph, title: String, record: usize) {
        self.marks.push(Mark {
            lane,
            at,
            glyph,
            hollow: false,
            label: None,
            title,
            record,
        });
    }

    fn record(&mut self, i: usize, at: SimTime, kind: &RecordKind) {
        match kind {
            RecordKind::Start { process, .. } => {
                self.lane(format!("{process} watchdog"));
            }
            RecordKind::Hold { who, token, .. } => {
                self.lane(who.to_string());
                let t = token.map(|t| format!(" token {t}")).unwrap_or_default();
                let c = self.color(&who.client);
                let title = format!("{who} believes it holds{t}");
                self.holding.insert(who.to_string(), (at, c, title, i));
            }
            RecordKind::Release { who, cause, .. } => self.release(&who.to_string(), *cause, at),
            RecordKind::Server { holder, .. } => {
                if let Some((from, color, title, record)) = self.redis.take() {
                    self.bars.push(Bar {
                        lane: 0,
                        from,
                        to: at,
                        color,
                        label: None,
                        title,
                        record,
                    });
                }
                if let Some(h) = holder {
                    self.redis =
                        Some((at, self.color(&h.client), format!("Redis: held by {h}"), i));
                }
            }
            RecordKind::RenewSent { process, retry, .. } => {
                let l = self.lane(format!("{process} watchdog"));
                let title = if *retry {
                    "renewal resent (retry)"
                } else {
                    "renewal sent"
                };
                self.mark(l, at, Glyph::RenewSent, title.to_owned(), i);
                if let Some(m) = self.marks.last_mut() {
                    m.hollow = *retry;
                }
            }
            RecordKind::RenewReply { process, reply, .. } => {
                let l = self.lane(format!("{process} watchdog"));
                let glyph = match reply.as_str() {
                    "1" => Glyph::Renewed,
                    "0" => Glyph::RenewMissed,
                    _ => Glyph::RenewError,
                };
                self.mark(l, at, glyph, format!("renewal -> {reply}"), i);
            }
            RecordKind::Lock { process, event } => {
                let (glyph, title) = match event {
                    lockcore::Event::RenewalStopped { reason, .. } => {
                        (Glyph::RenewStopped, format!("renewal stopped: {reason}"))
                    }
                    lockcore::Event::LeaseLost { .. } => {
                        (Glyph::LeaseLost, "lease lost".to_owned())
                    }
                    lockcore::Event::Renewed { .. }
                    | lockcore::Event::Resubscribing { .. }
                    | lockcore::Event::PubSubStopped { .. }
                    | lockcore::Event::SyncProbed { .. }
                    | lockcore::Event::ReplicasCounted { .. }
                    | lockcore::Event::AcquireRolledBack { .. }
                    | lockcore::Event::WaitBegan { .. }
                    | lockcore::Event::RenewalStaged { .. } => {
                        return;
                    }
                };
                let l = self.lane(format!("{process} watchdog"));
                self.mark(l, at, glyph, title, i);
            }
            RecordKind::Write {
                who,
                token,
                accepted,
                ..
            } => {
                let l = self.lane(who.to_string());
                let t = token.map(|t| format!("token {t}"));
                let (glyph, verdict) = if *accepted {
                    (Glyph::WriteAccepted, "accepted")
                } else {
                    (Glyph::WriteRejected, "REJECTED")
                };
                let shown = t.clone().unwrap_or_else(|| "no token".to_owned());
                self.mark(l, at, glyph, format!("write ({shown}) {verdict}"), i);
                if let Some(m) = self.marks.last_mut() {
                    m.label = t.map(|_| shown);
                }
            }
            RecordKind::Return {
                who,
                call: Call::Unlock,
                outcome: Outcome::Error { message, .. },
                ..
            } => {
                let l = self.lane(who.to_string());
                self.mark(
                    l,
                    at,
                    Glyph::UnlockError,
                    format!("unlock error: {message}"),
                    i,
                );
            }
            RecordKind::Fault { fault, phase } => self.fault(fault, *phase, at, i),
            RecordKind::Crash { process } => {
                let l = self.lane(format!("{process} watchdog"));
                self.mark(l, at, Glyph::Crash, format!("{process} crashes"), i);
            }
            _ => {}
        }
    }

    fn release(&mut self, who: &str, cause: ReleaseCause, at: SimTime) {
        let Some((from, color, title, record)) = self.holding.remove(who) else {
            return;
        };
        let lane = self.lane(who.to_owned());
        let why = match cause {
            ReleaseCause::Unlock => "unlock",
            ReleaseCause::Crash => "crash",
            ReleaseCause::LeaseLost => "lease lost",
        };
        self.bars.push(Bar {
            lane,
            from,
            to: at,
            color,
            label: None,
            title: format!("{title} (until {why})"),
            record,
        });
    }

    /// Each fault gets a lane of its own, so windows and their labels
    /// never overlap.
    fn fault(&mut self, fault: &sim::Fault, phase: Phase, at: SimTime, i: usize) {
        let key = crate::fault_line(fault);
        match phase {
            // An instant (an interrupt, a deleted key) is a sliver at its
            // time, not a window that never closes.
            Phase::Begin if fault.end_ms().is_none() => {
                let sliver = SimTime::from_ms(self.end.as_ms() / 200 + 1);
                let to = SimTime::from_ms(at.as_ms() + sliver.as_ms());
                self.fault_bar(key, at, to, i, fault_label(fault));
            }
            Phase::Begin => {
                self.faults.insert(key, (at, i, fault_label(fault)));
            }
            Phase::End => {
                let (from, record, label) =
                    self.faults
                        .remove(&key)
                        .unwrap_or((at, i, fault_label(fault)));
                self.fault_bar(key, from, at, record, label);
            }
        }
    }

    fn fault_bar(&mut self, key: String, from: SimTime, to: SimTime, record: usize, label: String) {
        let lane = self.lane(format!("fault: {label}"));
        self.bars.push(Bar {
            lane,
            from,
            to,
            color: FAULT,
            label: Some(label),
            title: key,
            record,
        });
    }

    fn finish(mut self, run: &Run) -> Layout {
        let end = self.end;
        for (who, (from, color, title, record)) in std::mem::take(&mut self.holding) {
            let lane = self.lane(who);
            self.bars.push(Bar {
                lane,
                from,
                to: end,
                color,
                label: None,
                title: format!("{title} (to the end)"),
                record,
            });
        }
        if let Some((from, color, title, record)) = self.redis.take() {
            self.bars.push(Bar {
                lane: 0,
                from,
                to: end,
                color,
                label: None,
                title,
                record,
            });
        }
        for (key, (from, record, label)) in std::mem::take(&mut self.faults) {
            self.fault_bar(key, from, end, record, label);
        }
        let rules = rules(run, end);
        let mut glyphs: Vec<Glyph> = self.marks.iter().map(|m| m.glyph).collect();
        glyphs.sort();
        glyphs.dedup();
        Layout {
            end,
            lanes: self.lanes,
            bars: self.bars,
            marks: self.marks,
            rules,
            glyphs,
        }
    }
}

/// A violation's cause in a few words: `defect`, `misuse`, or `beyond
/// guarantee (pause A 45s)`, naming the fault the oracle blamed.
fn cause_label(run: &Run, v: &sim::Violation) -> String {
    match &v.cause {
        sim::Cause::Defect => "DEFECT".to_owned(),
        sim::Cause::Misuse { .. } => "misuse".to_owned(),
        sim::Cause::BeyondGuarantee { .. } => {
            match crate::explain::explaining_fault(&run.spec, &v.cause) {
                Some(f) => format!("beyond guarantee ({})", fault_label(f)),
                None => "beyond guarantee".to_owned(),
            }
        }
    }
}

/// The violations as rules, in time order. A label runs right of its
/// rule, or left of it when it would pass the chart's end, on the first
/// row where it meets no earlier label (widths estimated at 7 units per
/// character of the 1,180-unit plot, converted to virtual time).
fn rules(run: &Run, end: SimTime) -> Vec<Rule> {
    let mut violations: Vec<&sim::Violation> = run.violations.iter().collect();
    violations.sort_by_key(|v| v.at);
    // Each row's occupied spans, in virtual time.
    let mut rows: Vec<Vec<(u64, u64)>> = Vec::new();
    let per_char = (end.0 * 7 / 1_180).max(1);
    violations
        .into_iter()
        .map(|v| {
            let label = format!("{}: {}", v.invariant.name(), cause_label(run, v));
            let width = per_char * (label.chars().count() as u64 + 1);
            let leftward = v.at.0 + width > end.0;
            let span = if leftward {
                (v.at.0.saturating_sub(width), v.at.0)
            } else {
                (v.at.0, v.at.0 + width)
            };
            let free = |row: &Vec<(u64, u64)>| row.iter().all(|&(a, b)| span.1 < a || b < span.0);
            let row = rows.iter().position(free).unwrap_or(rows.len());
            if row == rows.len() {
                rows.push(Vec::new());
            }
            rows[row].push(span);
            Rule {
                at: v.at,
                label,
                defect: v.cause == sim::Cause::Defect,
                row,
                leftward,
                title: format!("{} at {}: {}; {}", v.invariant, v.at, v.detail, v.cause),
                records: v.events.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockcore::Release;

    fn layout_of(name: &str, profile: Release) -> Layout {
        let s = crate::builtin(name).unwrap();
        layout(&sim::run(&s.spec(None, Some(profile))).unwrap())
    }

    /// stw-pause under fenced: the pause window has its own lane, labelled
    /// with kind, target and length; A's late write is a rejected write
    /// labelled with its token; B's is accepted; the violation is a rule
    /// named by its invariant.
    #[test]
    fn stw_pause_under_fenced() {
        let l = layout_of("stw-pause", Release::FENCED);
        let fault = l
            .bars
            .iter()
            .find(|b| b.color == FAULT)
            .expect("a fault bar");
        assert_eq!(fault.label.as_deref(), Some("pause A 45s"));
        assert_eq!(l.lanes[fault.lane], "fault: pause A 45s");
        assert_eq!(fault.title, "pause client=A at_ms=5000 duration_ms=45000");
        let rejected = l
            .marks
            .iter()
            .find(|m| m.glyph == Glyph::WriteRejected)
            .expect("rejected");
        assert_eq!(rejected.label.as_deref(), Some("token 1"));
        assert_eq!(l.lanes[rejected.lane], "A/t1");
        assert!(
            l.marks
                .iter()
                .any(|m| m.glyph == Glyph::WriteAccepted && l.lanes[m.lane] == "B/t1")
        );
        assert!(l.rules[0].label.starts_with("mutual-exclusion: "));
        assert!(l.glyphs.contains(&Glyph::WriteRejected));
    }

    /// Renewals, their replies and unlock errors are distinct marks: the
    /// tiny timeout's renewal replies 0 and A's unlock fails.
    #[test]
    fn renewal_outcomes_and_unlock_errors_are_distinct() {
        let l = layout_of("tiny-watchdog-timeout", Release::REDISSON);
        for g in [
            Glyph::RenewSent,
            Glyph::RenewMissed,
            Glyph::RenewStopped,
            Glyph::UnlockError,
        ] {
            assert!(l.glyphs.contains(&g), "{g:?} missing: {:?}", l.glyphs);
        }
        let crash = layout_of("client-crash", Release::REDISSON);
        assert!(crash.glyphs.contains(&Glyph::Crash));
        let lost = layout_of("lease-shorter-than-work", Release::FENCED);
        assert!(lost.glyphs.contains(&Glyph::LeaseLost), "{:?}", lost.glyphs);
    }

    /// Each violation's rule says its invariant and its cause: the pause
    /// of stw-pause (000, 002) is beyond the guarantee, named with the
    /// fault's kind, target and length as its lane is; a misuse says so.
    #[test]
    fn rules_carry_their_cause() {
        let l = layout_of("stw-pause", Release::REDISSON);
        let r = &l.rules[0];
        assert_eq!(r.label, "mutual-exclusion: beyond guarantee (pause A 45s)");
        assert!(!r.defect);
        assert!(r.title.contains("beyond the guarantee: "), "{}", r.title);
        let jump = layout_of("clock-jump", Release::REDISSON);
        assert_eq!(
            jump.rules[0].label,
            "mutual-exclusion: beyond guarantee (clock-jump +26s)"
        );
        let misuse = layout_of("lease-shorter-than-work", Release::REDISSON);
        assert_eq!(misuse.rules[0].label, "mutual-exclusion: misuse");
    }

    /// A defect is marked apart from an expected loss: under 3.8.0 an
    /// unlock that fails while Redis is down leaves the watchdog renewing
    /// for ever (#1602); the liveness failure that follows is a defect,
    /// the losses during the outage are not. Labels at one instant take
    /// rows of their own, so they do not overlap.
    #[test]
    fn a_defect_is_drawn_apart_and_labels_do_not_overlap() {
        let s = crate::history_scenario("unlock-error-renews-forever").unwrap();
        let release: Release = "3.8.0".parse().unwrap();
        let l = layout(&sim::run(&s.spec(None, Some(release))).unwrap());
        let defect = l.rules.iter().find(|r| r.defect).expect("a defect");
        assert!(defect.label.ends_with(": DEFECT"), "{}", defect.label);
        assert!(
            l.rules
                .iter()
                .any(|r| !r.defect && r.label.contains(": beyond guarantee (redis-down ")),
            "{:?}",
            l.rules
        );
        for (i, a) in l.rules.iter().enumerate() {
            for b in &l.rules[i + 1..] {
                assert!(a.at != b.at || a.row != b.row, "{a:?} overlaps {b:?}");
            }
        }
    }

    /// An instant fault (the interrupt at 1 ms) is a sliver at its time,
    /// not a window open to the end of the run.
    #[test]
    fn an_instant_fault_is_a_sliver() {
        let s = crate::history_scenario("interrupted-acquire-renews-again").unwrap();
        let newest = Release::version(lockcore::Version::NEWEST);
        let l = layout(&sim::run(&s.spec(None, Some(newest))).unwrap());
        let bar = l
            .bars
            .iter()
            .find(|b| b.color == FAULT)
            .expect("a fault bar");
        assert_eq!(bar.from, SimTime::from_ms(1));
        assert!(bar.to.as_ms() < 1_000, "{bar:?}");
    }
}
