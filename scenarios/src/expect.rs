//! Expected outcomes: data in a scenario file, judged against a run's
//! [`Outcome`]. No scenario has Rust code of its own; every check is one of
//! the general kinds below.

use std::collections::BTreeMap;
use std::fmt;

use lockcore::{Era, Release};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sim::{CutShort, Invariant, SimTime};

use crate::{EventKind, Observation, Outcome, Verdict};

/// What one profile must give. Every field is optional; an absent field is
/// not checked.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// Safe or violated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Invariants that must be broken.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violated: Vec<Invariant>,
    /// Invariants that must be broken with no explanation (the oracle's
    /// `defect`): a corpus of found defects keeps its cause this way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defects: Vec<Invariant>,
    /// Invariants that must hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<Invariant>,
    /// The exact number of failed unlocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unlock_errors: Option<usize>,
    /// Bounds on how often an event happens.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub count: Vec<CountCheck>,
    /// Bounds on when an event first happens, from the start or from an anchor event.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timing: Vec<TimingCheck>,
    /// The keys the run must leave in Redis without a TTL (its residue,
    /// `sim::Residue`: the fenced lock's token keys, #6510), exactly; an
    /// empty list: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left: Option<Vec<String>>,
    /// Why this is the expected outcome (shown in reports, not checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// Which events a check looks at: a kind, optionally of one client and thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EventFilter<'a> {
    event: EventKind,
    client: Option<&'a str>,
    thread: Option<u64>,
}

impl EventFilter<'_> {
    fn matches(&self, o: &Observation) -> bool {
        o.kind == self.event
            && self.client.is_none_or(|c| c == o.client)
            && self.thread.is_none_or(|t| o.thread == Some(t))
    }
}

impl fmt::Display for EventFilter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.event)?;
        match (self.client, self.thread) {
            (Some(c), Some(t)) => write!(f, " by {c}/t{t}"),
            (Some(c), None) => write!(f, " by {c}"),
            (None, Some(t)) => write!(f, " by t{t}"),
            (None, None) => Ok(()),
        }
    }
}

/// `min <= number of matching events <= max`. (Serde's `flatten` would
/// lose the line numbers of errors, so each check spells out its filter.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CountCheck {
    /// The kind of event counted.
    pub event: EventKind,
    /// Only this client's events (by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// Only this thread's events (thread ids count from 1 in each client).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<u64>,
    /// At least this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<usize>,
    /// At most this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<usize>,
}

/// The first matching event at or after the anchor must exist and come
/// `min_ms..=max_ms` after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimingCheck {
    /// The kind of the awaited event.
    pub event: EventKind,
    /// Only this client's events (by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// Only this thread's events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<u64>,
    /// Measured from this event; from the start of the run when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Anchor>,
    /// Not sooner than this, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ms: Option<u64>,
    /// Not later than this, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ms: Option<u64>,
}

/// The event a timing is measured from: its first occurrence, or its last
/// with `last = true`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Anchor {
    /// The kind of the anchor event.
    pub event: EventKind,
    /// Only this client's events (by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// Only this thread's events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<u64>,
    /// Use the last occurrence instead of the first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub last: bool,
}

impl CountCheck {
    /// The first cut-short thread that could still have changed this
    /// count (a step that makes the counted event never ran), unless the
    /// count is already decided: a lower bound met with no upper bound.
    fn undecided<'c>(&self, n: usize, cut: &'c [CutShort]) -> Option<&'c CutShort> {
        if self.max.is_none() && self.min.is_some_and(|m| n >= m) {
            return None;
        }
        let steps = self.event.made_by_steps();
        cut.iter().find(|c| {
            self.client
                .as_deref()
                .is_none_or(|name| *name == *c.who.client)
                && self.thread.is_none_or(|t| t == c.who.thread)
                && c.kinds_not_run.iter().any(|k| steps.contains(&k.as_str()))
        })
    }

    fn filter(&self) -> EventFilter<'_> {
        EventFilter {
            event: self.event,
            client: self.client.as_deref(),
            thread: self.thread,
        }
    }
}

impl TimingCheck {
    fn filter(&self) -> EventFilter<'_> {
        EventFilter {
            event: self.event,
            client: self.client.as_deref(),
            thread: self.thread,
        }
    }
}

impl Anchor {
    fn filter(&self) -> EventFilter<'_> {
        EventFilter {
            event: self.event,
            client: self.client.as_deref(),
            thread: self.thread,
        }
    }
}

/// One way a run differed from its expectation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mismatch {
    /// Which check (`verdict`, `violated mutual-exclusion`, `count renewal by A`).
    pub check: String,
    /// What the expectation asked for.
    pub expected: String,
    /// What the run gave.
    pub got: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: expected {}, got {}",
            self.check, self.expected, self.got
        )
    }
}

fn mismatch(
    check: impl Into<String>,
    expected: impl Into<String>,
    got: impl Into<String>,
) -> Mismatch {
    Mismatch {
        check: check.into(),
        expected: expected.into(),
        got: got.into(),
    }
}

impl Expectation {
    /// The expectation of a profile that has none: every invariant holds.
    pub fn safe() -> Expectation {
        Expectation {
            verdict: Some(Verdict::Safe),
            ..Expectation::default()
        }
    }

    /// Every way `outcome` differs from this expectation; empty when it is
    /// as expected.
    pub fn evaluate(&self, outcome: &Outcome) -> Vec<Mismatch> {
        let mut out = Vec::new();
        if let Some(verdict) = self.verdict
            && outcome.verdict() != verdict
        {
            let got = match outcome.verdict() {
                Verdict::Safe => "safe".to_owned(),
                Verdict::Violated => format!("violated ({})", names(&outcome.broken_invariants())),
            };
            out.push(mismatch("verdict", verdict.name(), got));
        }
        for inv in &self.violated {
            if !outcome.is_broken(*inv) {
                out.push(mismatch(inv.name(), "violated", "held"));
            }
        }
        for inv in &self.defects {
            let defect = outcome
                .broken
                .iter()
                .any(|b| b.invariant == *inv && b.cause == sim::Cause::Defect);
            if !defect {
                let got = if outcome.is_broken(*inv) {
                    "violated with an explanation"
                } else {
                    "held"
                };
                out.push(mismatch(inv.name(), "a defect", got));
            }
        }
        for inv in &self.held {
            if outcome.is_broken(*inv) {
                out.push(mismatch(inv.name(), "held", "violated"));
            }
        }
        if let Some(n) = self.unlock_errors
            && outcome.unlock_errors != n
        {
            out.push(mismatch(
                "unlock errors",
                n.to_string(),
                outcome.unlock_errors.to_string(),
            ));
        }
        for c in &self.count {
            let n = outcome
                .events
                .iter()
                .filter(|o| c.filter().matches(o))
                .count();
            let low = c.min.is_some_and(|m| n < m);
            let high = c.max.is_some_and(|m| n > m);
            if low || high {
                out.push(mismatch(
                    format!("count {}", c.filter()),
                    bounds(c.min, c.max, ""),
                    n.to_string(),
                ));
            } else if let Some(cut) = c.undecided(n, &outcome.cut_short) {
                out.push(mismatch(
                    format!("count {}", c.filter()),
                    format!("{} with every counted step run", bounds(c.min, c.max, "")),
                    format!("{n} so far; {cut}"),
                ));
            }
        }
        for t in &self.timing {
            if let Some(m) = t.evaluate(&outcome.events) {
                out.push(m);
            }
        }
        if let Some(left) = &self.left
            && *left != outcome.left
        {
            let keys = |k: &[String]| format!("[{}]", k.join(", "));
            out.push(mismatch("keys left", keys(left), keys(&outcome.left)));
        }
        out
    }
}

impl TimingCheck {
    fn evaluate(&self, events: &[Observation]) -> Option<Mismatch> {
        let check = match &self.after {
            Some(a) => format!(
                "time from {}{} to {}",
                if a.last { "last " } else { "" },
                a.filter(),
                self.filter()
            ),
            None => format!("time of first {}", self.filter()),
        };
        let expected = bounds(self.min_ms, self.max_ms, " ms");
        let from = match &self.after {
            None => SimTime::ZERO,
            Some(a) => {
                let mut hits = events.iter().filter(|o| a.filter().matches(o));
                let hit = if a.last {
                    hits.next_back()
                } else {
                    hits.next()
                };
                match hit {
                    Some(o) => o.at,
                    None => return Some(mismatch(check, expected, format!("no {}", a.filter()))),
                }
            }
        };
        let Some(hit) = events
            .iter()
            .find(|o| o.at >= from && self.filter().matches(o))
        else {
            return Some(mismatch(check, expected, format!("no {}", self.filter())));
        };
        let delay_us = hit.at.0 - from.0;
        let low = self
            .min_ms
            .is_some_and(|m| delay_us < m.saturating_mul(1_000));
        let high = self
            .max_ms
            .is_some_and(|m| delay_us > m.saturating_mul(1_000));
        (low || high).then(|| mismatch(check, expected, format!("{} ms", format_ms(delay_us))))
    }
}

fn format_ms(us: u64) -> String {
    if us.is_multiple_of(1_000) {
        (us / 1_000).to_string()
    } else {
        format!("{}.{:03}", us / 1_000, us % 1_000)
    }
}

fn bounds<T: fmt::Display + PartialEq>(min: Option<T>, max: Option<T>, unit: &str) -> String {
    match (min, max) {
        (Some(a), Some(b)) if a == b => format!("{a}{unit}"),
        (Some(a), Some(b)) => format!("{a}..={b}{unit}"),
        (Some(a), None) => format!(">= {a}{unit}"),
        (None, Some(b)) => format!("<= {b}{unit}"),
        (None, None) => "anything".to_owned(),
    }
}

fn names(invariants: &[Invariant]) -> String {
    invariants
        .iter()
        .map(|i| i.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The expectation of each profile. `default` applies to profiles that have
/// no table of their own; a profile with neither is expected to be safe.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// For profiles without their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Expectation>,
    /// `redisson-legacy`.
    #[serde(
        default,
        rename = "redisson-legacy",
        skip_serializing_if = "Option::is_none"
    )]
    pub redisson_legacy: Option<Expectation>,
    /// `redisson`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redisson: Option<Expectation>,
    /// `redisson-batched`.
    #[serde(
        default,
        rename = "redisson-batched",
        skip_serializing_if = "Option::is_none"
    )]
    pub redisson_batched: Option<Expectation>,
    /// `fenced`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fenced: Option<Expectation>,
    /// Per release, keyed by the release as written (`"3.23.4"`,
    /// `"3.23.4 +no-lock-resend"`): `[expect.release."3.23.4"]`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub release: BTreeMap<String, Expectation>,
}

impl Expectations {
    /// The release's own expectation, if it has one: its entry under
    /// `release`, else (for an era alias, or a version by the bookkeeping
    /// it runs) its era's table.
    pub fn own(&self, profile: Release) -> Option<&Expectation> {
        if let Some(own) = self.release.get(&profile.to_string()) {
            return Some(own);
        }
        self.era(profile.as_era().unwrap_or_else(|| profile.bookkeeping()))
    }

    /// The table of one era.
    pub fn era(&self, era: Era) -> Option<&Expectation> {
        match era {
            Era::RedissonLegacy => self.redisson_legacy.as_ref(),
            Era::Redisson => self.redisson.as_ref(),
            Era::RedissonBatched => self.redisson_batched.as_ref(),
            Era::Fenced => self.fenced.as_ref(),
        }
    }

    /// Sets `profile`'s own expectation (its era's table for an alias,
    /// else its entry under `release`).
    pub fn set(&mut self, profile: Release, expectation: Expectation) {
        match profile.as_era() {
            Some(Era::RedissonLegacy) => self.redisson_legacy = Some(expectation),
            Some(Era::Redisson) => self.redisson = Some(expectation),
            Some(Era::RedissonBatched) => self.redisson_batched = Some(expectation),
            Some(Era::Fenced) => self.fenced = Some(expectation),
            None => {
                self.release.insert(profile.to_string(), expectation);
            }
        }
    }

    /// What `profile` must give: its own table, else `default`, else safe.
    pub fn for_profile(&self, profile: Release) -> Expectation {
        self.own(profile)
            .or(self.default.as_ref())
            .cloned()
            .unwrap_or_else(Expectation::safe)
    }
}

impl fmt::Display for Expectation {
    /// One line: `verdict=violated violated=[mutual-exclusion] unlock_errors=2 ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        if let Some(v) = self.verdict {
            parts.push(format!("verdict={v}"));
        }
        if !self.violated.is_empty() {
            parts.push(format!("violated=[{}]", names(&self.violated)));
        }
        if !self.defects.is_empty() {
            parts.push(format!("defects=[{}]", names(&self.defects)));
        }
        if !self.held.is_empty() {
            parts.push(format!("held=[{}]", names(&self.held)));
        }
        if let Some(n) = self.unlock_errors {
            parts.push(format!("unlock_errors={n}"));
        }
        for c in &self.count {
            parts.push(format!(
                "count({} {})",
                c.filter(),
                bounds(c.min, c.max, "")
            ));
        }
        for t in &self.timing {
            let from = match &t.after {
                Some(a) => format!("{}{} -> ", if a.last { "last " } else { "" }, a.filter()),
                None => "start -> ".to_owned(),
            };
            parts.push(format!(
                "timing({from}{} {})",
                t.filter(),
                bounds(t.min_ms, t.max_ms, " ms")
            ));
        }
        if parts.is_empty() {
            parts.push("anything".to_owned());
        }
        f.write_str(&parts.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Broken;

    fn at(ms: u64) -> SimTime {
        SimTime::from_ms(ms)
    }

    fn obs(ms: u64, client: &str, kind: EventKind) -> Observation {
        Observation {
            at: at(ms),
            client: client.to_owned(),
            thread: Some(1),
            kind,
        }
    }

    /// `left` must list the keys exactly: a missing one, or an expected
    /// none when one is left, is a mismatch.
    #[test]
    fn keys_left_must_match_exactly() {
        let key = "redisson_lock_token:{l}".to_owned();
        let mut o = outcome();
        let e = Expectation {
            left: Some(vec![key.clone()]),
            ..Expectation::default()
        };
        assert_eq!(e.evaluate(&o).len(), 1);
        o.left = vec![key];
        assert!(e.evaluate(&o).is_empty());
        let none = Expectation {
            left: Some(Vec::new()),
            ..Expectation::default()
        };
        assert_eq!(none.evaluate(&o)[0].check, "keys left");
    }

    /// A run where A renews twice, then B acquires 10 s after A's last
    /// renewal, breaking mutual exclusion, and one unlock fails.
    fn outcome() -> Outcome {
        Outcome {
            broken: vec![Broken {
                invariant: Invariant::MutualExclusion,
                at: at(30_000),
                detail: "two holders".into(),
                cause: sim::Cause::Defect,
            }],
            unlock_errors: 1,
            events: vec![
                obs(0, "A", EventKind::Acquired),
                obs(10_000, "A", EventKind::Renewal),
                obs(20_000, "A", EventKind::Renewal),
                obs(30_000, "B", EventKind::Acquired),
            ],
            cut_short: Vec::new(),
            left: Vec::new(),
        }
    }

    /// Issue 10: a thread still working at the horizon was not flagged,
    /// and a count of events its unrun steps would make passed. Such a
    /// count now fails, naming the thread; a count already decided (a
    /// lower bound met, no upper bound) and counts of other clients or of
    /// events no step makes are unaffected.
    #[test]
    fn counts_fail_when_a_counted_step_never_ran() {
        let mut o = outcome();
        o.cut_short = vec![CutShort {
            who: sim::Who {
                client: "B".into(),
                life: 0,
                thread: 1,
            },
            doing: "work or sleep".into(),
            steps_not_run: 2,
            kinds_not_run: vec!["unlock".into(), "write".into()],
        }];
        let e = parse("count = [{ event = \"released\", client = \"B\", max = 3 }]");
        let m = e.evaluate(&o);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(
            m[0].got
                .contains("thread B/t1 still working at the horizon"),
            "{}",
            m[0]
        );
        let decided = parse("count = [{ event = \"acquired\", client = \"B\", min = 1 }]");
        assert!(decided.evaluate(&o).is_empty());
        let other = parse("count = [{ event = \"write-accepted\", client = \"A\", max = 0 }]");
        assert!(other.evaluate(&o).is_empty());
        let watchdog = parse("count = [{ event = \"renewal\", max = 5 }]");
        assert!(watchdog.evaluate(&o).is_empty());
    }

    fn parse(text: &str) -> Expectation {
        toml::from_str(text).unwrap()
    }

    /// An expectation that matches the run gives no mismatch; this is the
    /// baseline the failing cases below differ from.
    #[test]
    fn matching_expectation_passes() {
        let e = parse(
            r#"
verdict = "violated"
violated = ["mutual-exclusion"]
held = ["fencing"]
unlock_errors = 1
count = [{ event = "renewal", client = "A", min = 2, max = 2 }]
timing = [{ event = "acquired", client = "B", after = { event = "renewal", client = "A", last = true }, min_ms = 10000, max_ms = 10000 }]
"#,
        );
        assert_eq!(e.evaluate(&outcome()), vec![]);
    }

    /// Each kind of check fails on its own when the run differs from it.
    #[test]
    fn each_check_can_fail() {
        let cases = [
            (r#"verdict = "safe""#, "verdict"),
            (r#"violated = ["fencing"]"#, "fencing"),
            (r#"held = ["mutual-exclusion"]"#, "mutual-exclusion"),
            ("unlock_errors = 2", "unlock errors"),
            (
                r#"count = [{ event = "renewal", max = 1 }]"#,
                "count renewal",
            ),
            (
                r#"count = [{ event = "acquired", client = "B", min = 2 }]"#,
                "count acquired by B",
            ),
            (
                r#"timing = [{ event = "acquired", client = "B", max_ms = 29999 }]"#,
                "time of first acquired by B",
            ),
            (
                r#"timing = [{ event = "expired" }]"#,
                "time of first expired",
            ),
            (
                r#"timing = [{ event = "acquired", after = { event = "crash" } }]"#,
                "time from crash to acquired",
            ),
        ];
        for (text, check) in cases {
            let m = parse(text).evaluate(&outcome());
            assert_eq!(m.len(), 1, "{text}: {m:?}");
            assert_eq!(m[0].check, check, "{text}");
        }
    }

    /// The mismatch text says what was expected and what happened.
    #[test]
    fn mismatch_text() {
        let m = parse(r#"verdict = "safe""#).evaluate(&outcome());
        assert_eq!(
            m[0].to_string(),
            "verdict: expected safe, got violated (mutual-exclusion)"
        );
        let m =
            parse(r#"count = [{ event = "renewal", client = "A", min = 3 }]"#).evaluate(&outcome());
        assert_eq!(m[0].to_string(), "count renewal by A: expected >= 3, got 2");
    }

    /// A timing is measured to the first matching event at or after the
    /// anchor, not to one before it.
    #[test]
    fn timing_ignores_events_before_the_anchor() {
        let e = parse(
            r#"timing = [{ event = "acquired", after = { event = "renewal", client = "A" }, max_ms = 20000 }]"#,
        );
        // A's own acquire at 0 comes before the first renewal: B's at 30 s counts.
        assert_eq!(e.evaluate(&outcome()), vec![]);
        let e = parse(
            r#"timing = [{ event = "acquired", after = { event = "renewal", client = "A" }, max_ms = 19999 }]"#,
        );
        assert_eq!(e.evaluate(&outcome()).len(), 1);
    }

    /// A profile with its own table uses it; others fall back to `default`,
    /// and with neither the run is expected to be safe.
    #[test]
    fn expectations_fall_back() {
        let all: Expectations = toml::from_str(
            r#"
[default]
unlock_errors = 1
[fenced]
verdict = "safe"
"#,
        )
        .unwrap();
        assert_eq!(
            all.for_profile(Release::FENCED).verdict,
            Some(Verdict::Safe)
        );
        assert_eq!(all.for_profile(Release::REDISSON).unlock_errors, Some(1));
        assert_eq!(
            Expectations::default().for_profile(Release::REDISSON),
            Expectation::safe()
        );
        assert_eq!(Expectation::safe().evaluate(&outcome()).len(), 1);
    }

    /// An unknown event kind in a check is rejected when the file is read.
    #[test]
    fn unknown_event_kind_is_rejected() {
        let err = toml::from_str::<Expectation>(r#"count = [{ event = "renewd" }]"#).unwrap_err();
        assert!(err.message().contains("unknown variant `renewd`"), "{err}");
    }
}
