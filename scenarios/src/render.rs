//! The text of a trial: settings first, then the timeline, then the
//! verdict. `locksim run`, `locksim replay` and the report's timeline
//! files all print this, and the timeline snapshots are taken of it.

use std::fmt::Write as _;

use sim::{Fault, SimSpec};

use crate::Trial;

/// How to rerun what is rendered: `locksim run <scenario>` or `locksim replay <seed>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rerun {
    /// A scenario, by the name or path it was loaded from.
    Scenario(String),
    /// An explored seed, with the workload it was explored with, or a
    /// branch of its run.
    Replay(sim::Workload, Option<sim::BranchPath>),
}

impl Rerun {
    /// The full command that reruns `trial`.
    pub fn command(&self, trial: &Trial) -> String {
        match self {
            Rerun::Scenario(name) => format!(
                "locksim run {name} --seed {} {}{}",
                trial.seed,
                trial.profile.flags(),
                crate::trial::engine_flag(&trial.engine)
            ),
            Rerun::Replay(workload, branch) => format!(
                "locksim replay {} {}{}{}{}",
                trial.seed,
                trial.profile.flags(),
                workload.flags(),
                branch
                    .as_ref()
                    .map_or_else(String::new, |path| format!(" --branch {path}")),
                crate::trial::engine_flag(&trial.engine)
            ),
        }
    }
}

/// The header: seed and every setting of the run, one per line.
pub fn render_header(trial: &Trial, description: &str, source: Option<&str>) -> String {
    let spec = &trial.run.spec;
    let mut s = String::new();
    let _ = writeln!(s, "scenario  {}", trial.scenario);
    if let Some(src) = source {
        let _ = writeln!(s, "source    {src}");
    }
    for line in wrap(description, 72) {
        let _ = writeln!(s, "          {line}");
    }
    let _ = writeln!(s, "seed      {}", trial.seed);
    let _ = writeln!(s, "profile   {}", trial.profile);
    if trial.engine != sim::Engine::Fast {
        let note = if trial.engine.is_deterministic() {
            ""
        } else {
            " (real time: not deterministic, a rerun may differ)"
        };
        let _ = writeln!(s, "engine    {}{note}", trial.engine);
        if !trial.engine.is_deterministic() {
            // The real engine's bounds stretch with the stalls it measured.
            let _ = writeln!(
                s,
                "          judged allowing {}ms a message: the spec's latency or the run's longest stall, scaled",
                trial.run.history.meta.max_latency_ms
            );
        }
    }
    let _ = writeln!(s, "settings  {}", settings(spec));
    for c in &spec.clients {
        let mut over = Vec::new();
        if let Some(p) = c.profile {
            over.push(format!("profile={p}"));
        }
        if let Some(w) = c.watchdog_timeout_ms {
            over.push(format!("lockWatchdogTimeout={w}ms"));
        }
        // A single server is the default only without replicas: with them
        // it says the client sends no `WAIT`.
        if let Some(mode) = c.mode.filter(|m| !m.is_single() || spec.redis.replicas > 0) {
            over.push(format!("mode={}", mode.name()));
        }
        if !over.is_empty() {
            let _ = writeln!(s, "client    {}: {}", c.name, over.join(" "));
        }
    }
    if spec.faults.0.is_empty() {
        let _ = writeln!(s, "faults    none");
    }
    for f in &spec.faults.0 {
        let _ = writeln!(s, "fault     {}", fault_line(f));
    }
    let _ = writeln!(s, "expect    {}", trial.expected);
    s
}

/// The whole text: header, timeline, verdict, and a rerun line when the
/// run broke an invariant or was not as expected.
pub fn render_trial(
    trial: &Trial,
    description: &str,
    source: Option<&str>,
    rerun: &Rerun,
) -> String {
    let mut s = render_header(trial, description, source);
    let _ = writeln!(s, "--- timeline");
    let _ = write!(s, "{}", trial.run.history);
    let _ = writeln!(s, "--- verdict");
    s.push_str(&render_verdict(trial));
    if !trial.as_expected() || !trial.outcome.broken.is_empty() {
        let _ = writeln!(s, "reproduce with: {}", rerun.command(trial));
    }
    s
}

/// The verdict, each broken invariant, unlock errors, and whether the run
/// was as expected (with every mismatch when not).
pub fn render_verdict(trial: &Trial) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "verdict   {}", trial.verdict());
    for v in &trial.run.violations {
        let _ = writeln!(
            s,
            "  {:>12}  {}  {}",
            v.at.to_string(),
            v.invariant,
            v.detail
        );
        let _ = writeln!(s, "  {:>12}    cause: {}", "", v.cause);
    }
    for c in &trial.outcome.cut_short {
        let _ = writeln!(s, "cut short {c}");
    }
    for r in &trial.run.residue {
        let _ = writeln!(s, "left      {r}");
    }
    let _ = writeln!(s, "unlock errors  {}", trial.outcome.unlock_errors);
    if trial.as_expected() {
        let _ = writeln!(s, "result    as expected");
    } else {
        let _ = writeln!(s, "result    NOT as expected");
        for m in &trial.mismatches {
            let _ = writeln!(s, "  - {m}");
        }
    }
    s
}

fn settings(spec: &SimSpec) -> String {
    let mut s = format!(
        "lockWatchdogTimeout={}ms latency={}-{}ms horizon={}ms",
        spec.watchdog_timeout_ms, spec.latency.min_ms, spec.latency.max_ms, spec.horizon_ms
    );
    let redis = &spec.redis;
    if redis.replicas > 0 {
        let lag = redis.replication_lag;
        let _ = write!(
            s,
            " replicas={} replication_lag={}-{}ms",
            redis.replicas, lag.min_ms, lag.max_ms
        );
    }
    // Only when set: every run before these settings existed shows as it
    // did.
    if redis.version != fake_redis::RedisVersion::default() {
        let _ = write!(s, " redis={}", redis.version);
    }
    if redis.appendonly {
        s.push_str(" appendonly=yes");
    }
    if redis.replica_appendonly {
        s.push_str(" replica_appendonly=yes");
    }
    if redis.proxy {
        s.push_str(" proxy=cluster");
    }
    if redis.shards > 0 {
        let _ = write!(s, " shards={}", redis.shards);
    }
    if redis.masters > 0 {
        let _ = write!(s, " masters={}", redis.masters);
        let placed: Vec<String> = (redis.placement.iter())
            .map(|(lock, m)| format!("{lock}@{m}"))
            .collect();
        if !placed.is_empty() {
            let _ = write!(s, " placement={}", placed.join(","));
        }
    }
    s
}

/// `pause client=A at_ms=5000 duration_ms=45000`: the fault's own fields,
/// read through serde so that every kind sim knows is shown the same way.
pub fn fault_line(f: &Fault) -> String {
    let (kind, fields) = fault_fields(f);
    let mut parts = vec![kind];
    parts.extend(fields.into_iter().map(|(k, v)| format!("{k}={v}")));
    parts.join(" ")
}

/// A fault's kind as the scenario format names it (`pause`, `redis-down`)
/// and its set fields with their values as [`fault_line`] shows them, read
/// through serde: the client first, then the start, then the rest by name.
pub(crate) fn fault_fields(f: &Fault) -> (String, Vec<(String, String)>) {
    let Ok(serde_json::Value::Object(map)) = serde_json::to_value(f) else {
        return (format!("{f:?}"), Vec::new());
    };
    let kind = map.get("fault").and_then(|v| v.as_str()).unwrap_or("fault");
    // A fixed order whatever serde_json's map features are: who, when, then
    // the rest by name.
    let mut keys: Vec<&String> = map.keys().filter(|k| *k != "fault").collect();
    keys.sort_by_key(|k| (*k != "client", *k != "at_ms", (*k).clone()));
    let fields = keys
        .into_iter()
        .filter(|k| !map[*k].is_null())
        .map(|k| {
            let v = &map[k];
            let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
            (k.clone(), text)
        })
        .collect();
    (kind.to_owned(), fields)
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}
