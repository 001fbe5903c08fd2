//! Spec validation: a spec that cannot run, or that would run without
//! testing what it says, gets a clear error naming the field; never a
//! panic, a silent no-op or a run that takes hours. The scenario layer
//! calls this too (with its `sim.` prefix), so the rules live here once.

use std::collections::BTreeSet;

use crate::model::script::expanded_len;
use crate::model::time::EPOCH_MS;
use crate::{ClientSpec, Fault, SimError, SimSpec, Step};

/// The longest latency or delay a spec may ask for: an hour of virtual time.
pub const MAX_DELAY_MS: u64 = 3_600_000;

/// The longest run: a day of virtual time (a watchdog renews for ever,
/// so the horizon bounds the work of every run).
pub const MAX_HORIZON_MS: u64 = 86_400_000;

/// The longest lease, wait or watchdog timeout. Redis refuses a `PEXPIRE`
/// whose expiry (now + ms) overflows a signed 64-bit ms timestamp, after
/// the acquire script's `HINCRBY` already ran, so the key would never
/// expire; this is the largest value whose expiry fits at every instant
/// of the longest run (the simulated clock starts at a fixed epoch and a
/// clock jump moves it by a day at most).
pub const MAX_LEASE_MS: u64 = i64::MAX as u64 - EPOCH_MS - 2 * MAX_HORIZON_MS;

/// The most steps all threads together may execute (repeats expanded).
pub const MAX_STEPS: u64 = 1_000_000;

/// The most client processes: every unlock message fans out to each
/// waiting client, so contention costs grow with the square of this.
pub const MAX_CLIENTS: usize = 1_000;

/// The most threads over all clients, for the same reason.
pub const MAX_THREADS: usize = 1_000;

/// The most faults in one plan.
pub const MAX_FAULTS: usize = 10_000;

/// The longest client name.
pub const MAX_NAME_LEN: usize = 32;

/// The rule for client names, as error messages state it.
pub const NAME_RULE: &str = "a letter, then up to 31 letters, digits, '_' or '-'";

/// Whether `name` is an identifier: [`NAME_RULE`]. Names appear in
/// timelines (`A/t1`, `A~1`), so `/`, `~`, spaces and line breaks would
/// make one actor look like another or forge a line.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.len() <= MAX_NAME_LEN
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Where a field sits in the spec (`clients[0].threads[1].steps[2].ms`),
/// built on the stack as validation descends and formatted only when an
/// error names it: explore validates every generated spec, and formatting
/// each path up front cost a tenth of a run.
#[derive(Clone, Copy)]
enum Path<'a> {
    Root(&'static str),
    Field(&'a Path<'a>, &'static str),
    Index(&'a Path<'a>, usize),
}

impl<'a> Path<'a> {
    fn field(&'a self, name: &'static str) -> Path<'a> {
        Path::Field(self, name)
    }

    fn index(&'a self, i: usize) -> Path<'a> {
        Path::Index(self, i)
    }
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Root(name) => f.write_str(name),
            Path::Field(parent, name) => write!(f, "{parent}.{name}"),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// Checks `spec` before anything runs.
pub fn validate_spec(spec: &SimSpec) -> Result<(), SimError> {
    validate_setting(spec)?;
    validate_faults(spec)
}

/// Checks everything of `spec` but its fault plan: the swarm checks this
/// once, then [`validate_faults`] after each fault it adds.
pub(crate) fn validate_setting(spec: &SimSpec) -> Result<(), SimError> {
    if spec.horizon_ms == 0 || spec.horizon_ms > MAX_HORIZON_MS {
        return invalid(
            "horizon_ms",
            format!(
                "must be between 1 and {MAX_HORIZON_MS} ms (a day), got {}",
                spec.horizon_ms
            ),
        );
    }
    lease_range(
        Path::Root("watchdog_timeout_ms"),
        spec.watchdog_timeout_ms,
        3,
    )?;
    crate::model::fault::range("latency", spec.latency.min_ms, spec.latency.max_ms).map_err(
        |(field, reason)| SimError::Invalid {
            field: field.to_owned(),
            reason,
        },
    )?;
    clients(spec)?;
    reseeds(spec)?;
    redis(spec)
}

/// Each reseed falls inside the run, after the one before it.
fn reseeds(spec: &SimSpec) -> Result<(), SimError> {
    let mut after = None;
    for (i, r) in spec.reseeds.iter().enumerate() {
        if r.at_ms >= spec.horizon_ms || after.is_some_and(|a| r.at_ms <= a) {
            return invalid(
                format!("reseeds[{i}].at_ms"),
                format!(
                    "must be before the horizon ({} ms) and after the reseed before it, got {}",
                    spec.horizon_ms, r.at_ms
                ),
            );
        }
        after = Some(r.at_ms);
    }
    Ok(())
}

/// Checks the fault plan of `spec`, whose setting is valid.
pub(crate) fn validate_faults(spec: &SimSpec) -> Result<(), SimError> {
    if spec.faults.0.len() > MAX_FAULTS {
        return invalid(
            "faults",
            format!("at most {MAX_FAULTS} faults, got {}", spec.faults.0.len()),
        );
    }
    (0..spec.faults.0.len()).try_for_each(|i| fault_at(spec, i))
}

/// [`validate_faults`] for a plan whose faults before the last were
/// valid already: a fault's rules look only at faults before it, so only
/// the last needs checking (the generator adds a fault at a time).
pub(crate) fn validate_last_fault(spec: &SimSpec) -> Result<(), SimError> {
    if spec.faults.0.len() > MAX_FAULTS {
        return validate_faults(spec);
    }
    match spec.faults.0.len().checked_sub(1) {
        Some(last) => fault_at(spec, last),
        None => Ok(()),
    }
}

/// Fault `i`'s own rules and its rules against the plan's earlier faults.
fn fault_at(spec: &SimSpec, i: usize) -> Result<(), SimError> {
    let Some(f) = spec.faults.0.get(i) else {
        return Ok(());
    };
    let path = Path::Root("faults").index(i);
    fault(f, path, spec)?;
    f.kind()
        .check_plan(i, spec)
        .map_err(|(field, reason)| SimError::Invalid {
            field: format!("{path}.{field}"),
            reason,
        })
}

/// The most `retryAttempts` a client may set: Redisson's is a Java int.
pub const MAX_RETRY_ATTEMPTS: u32 = i32::MAX as u32;

/// The most replicas Redis may have.
pub const MAX_REPLICAS: u32 = 16;

fn redis(spec: &SimSpec) -> Result<(), SimError> {
    let r = &spec.redis;
    if r.replicas > MAX_REPLICAS {
        return invalid(
            "redis.replicas",
            format!("at most {MAX_REPLICAS} replicas, got {}", r.replicas),
        );
    }
    if r.replica_appendonly && r.replicas == 0 {
        return invalid(
            "redis.replica_appendonly",
            "there are no replicas to write an AOF: set redis.replicas".to_owned(),
        );
    }
    if r.proxy && r.replicas > 0 {
        // A cluster's replicas follow `CLUSTER REPLICATE`, per shard: not
        // modelled yet (issue #49).
        return invalid(
            "redis.proxy",
            "a cluster behind a proxy is modelled without replicas yet: set redis.replicas = 0"
                .to_owned(),
        );
    }
    crate::model::cluster::validate(spec)?;
    crate::model::masters::validate(spec)?;
    crate::model::fault::range(
        "redis.replication_lag",
        r.replication_lag.min_ms,
        r.replication_lag.max_ms,
    )
    .map_err(|(field, reason)| SimError::Invalid {
        field: field.to_owned(),
        reason,
    })
}

fn clients(spec: &SimSpec) -> Result<(), SimError> {
    let n = spec.clients.len();
    if n == 0 || n > MAX_CLIENTS {
        return invalid(
            "clients",
            format!("must list between 1 and {MAX_CLIENTS} clients, got {n}"),
        );
    }
    let threads: usize = spec.clients.iter().map(|c| c.threads.len()).sum();
    if threads > MAX_THREADS {
        return invalid(
            "clients",
            format!("at most {MAX_THREADS} threads over all clients, got {threads}"),
        );
    }
    let mut names = BTreeSet::new();
    let mut steps = 0u64;
    let list = Path::Root("clients");
    for (i, c) in spec.clients.iter().enumerate() {
        let path = list.index(i);
        if !names.insert(c.name.as_str()) {
            return invalid(
                path.field("name"),
                format!("client name '{}' is used twice", c.name),
            );
        }
        steps = steps.saturating_add(client(c, path, spec.horizon_ms)?);
    }
    if steps > MAX_STEPS {
        return invalid(
            "clients",
            format!("the threads run {steps} steps in all (repeats expanded); at most {MAX_STEPS}"),
        );
    }
    Ok(())
}

/// Checks one client; returns how many steps its threads run.
fn client(c: &ClientSpec, path: Path<'_>, horizon_ms: u64) -> Result<u64, SimError> {
    if !is_identifier(&c.name) {
        return invalid(
            path.field("name"),
            format!(
                "client name {:?} is not an identifier ({NAME_RULE})",
                c.name
            ),
        );
    }
    if c.threads.is_empty() {
        return invalid(
            path.field("threads"),
            format!("client '{}' has no threads", c.name),
        );
    }
    if let Some(w) = c.watchdog_timeout_ms {
        lease_range(path.field("watchdog_timeout_ms"), w, 3)?;
    }
    settings(c, path)?;
    let mut total = 0u64;
    let threads = path.field("threads");
    for (t, thread) in c.threads.iter().enumerate() {
        let tp = threads.index(t);
        if thread.start_ms >= horizon_ms {
            return invalid(
                tp.field("start_ms"),
                format!(
                    "the thread starts at {} ms, at or after the horizon ({horizon_ms} ms), so it would never run",
                    thread.start_ms
                ),
            );
        }
        let lock = thread.lock.as_str();
        if lock.chars().any(|ch| ch.is_whitespace() || ch.is_control()) {
            return invalid(
                tp.field("lock"),
                format!("lock name {lock:?} must not contain spaces or control characters"),
            );
        }
        if thread.steps.is_empty() {
            return invalid(tp.field("steps"), "the thread has no steps".to_owned());
        }
        steps(&thread.steps, tp.field("steps"))?;
        if let Some(multi) = &thread.multi
            && let Err((field, reason)) = multi.check(&thread.steps)
        {
            let multi = tp.field("multi");
            return match field {
                "steps" => invalid(tp.field("steps"), reason),
                _ => invalid(multi.field(field), reason),
            };
        }
        let mut kinds = Vec::new();
        crate::model::step::objects(&thread.steps, &mut kinds);
        if let [first, second, ..] = kinds[..] {
            return invalid(
                tp.field("steps"),
                format!(
                    "the thread acquires both the {first} and the {second} object of its lock; a thread's acquires must name one (one thread per lock object)"
                ),
            );
        }
        total = total.saturating_add(expanded_len(&thread.steps));
    }
    Ok(total)
}

/// The bounds of a client's overrides of Redisson's settings.
fn settings(c: &ClientSpec, path: Path<'_>) -> Result<(), SimError> {
    let delays = [
        ("timeout_ms", c.timeout_ms, 1),
        ("retry_interval_ms", c.retry_interval_ms, 0),
        ("slaves_sync_timeout_ms", c.slaves_sync_timeout_ms, 1),
        ("scan_interval_ms", c.scan_interval_ms, 1),
    ];
    for (field, ms, min) in delays {
        if let Some(ms) = ms {
            delay_range(path.field(field), ms, min)?;
        }
    }
    if let Some(j) = c.retry_jitter {
        let jitter = path.field("retry_jitter");
        delay_range(jitter.field("base_ms"), j.base_ms, 1)?;
        delay_range(jitter.field("max_ms"), j.max_ms, 1)?;
        if c.retry_interval_ms.is_some() {
            return invalid(
                jitter,
                "set retry_interval_ms (a constant pause) or retry_jitter, not both".to_owned(),
            );
        }
    }
    if let Some(n) = c.retry_attempts
        && n > MAX_RETRY_ATTEMPTS
    {
        return invalid(
            path.field("retry_attempts"),
            format!("must be at most {MAX_RETRY_ATTEMPTS} (a Java int), got {n}"),
        );
    }
    Ok(())
}

/// A setting's delay: from `min` to an hour.
fn delay_range(field: Path<'_>, ms: u64, min: u64) -> Result<(), SimError> {
    if ms < min || ms > MAX_DELAY_MS {
        return invalid(
            field,
            format!("must be between {min} and {MAX_DELAY_MS} ms (an hour), got {ms}"),
        );
    }
    Ok(())
}

fn steps(list: &[Step], path: Path<'_>) -> Result<(), SimError> {
    for (i, step) in list.iter().enumerate() {
        let here = path.index(i);
        if let Err((field, reason)) = step.kind().check() {
            return invalid(here.field(field), reason);
        }
        if !step.body().is_empty() {
            steps(step.body(), here.field("steps"))?;
        }
    }
    Ok(())
}

fn fault(f: &Fault, path: Path<'_>, spec: &SimSpec) -> Result<(), SimError> {
    let horizon_ms = spec.horizon_ms;
    // A scan of the clients: the generator checks every fault it adds,
    // and a set of the names made for each was a hundredth of a generated
    // spec. A spec at the limits (10,000 faults, 1,000 clients) compares
    // names ten million times, far less than running it would cost.
    if let Some(client) = f.client()
        && !spec.clients.iter().any(|c| c.name == client)
    {
        let names: BTreeSet<&str> = spec.clients.iter().map(|c| c.name.as_str()).collect();
        return invalid(
            path.field("client"),
            format!(
                "names unknown client '{client}' (clients: {})",
                names.into_iter().collect::<Vec<_>>().join(", ")
            ),
        );
    }
    if f.at_ms() >= horizon_ms {
        return invalid(
            path.field("at_ms"),
            format!(
                "the fault strikes at {} ms, at or after the horizon ({horizon_ms} ms), so it would never fire",
                f.at_ms()
            ),
        );
    }
    f.kind()
        .check(horizon_ms)
        .map_err(|(field, reason)| SimError::Invalid {
            field: format!("{path}.{field}"),
            reason,
        })?;
    if let (Some(end), Some(d)) = (f.end_ms(), duration(f))
        && (d == 0 || d > MAX_HORIZON_MS)
    {
        return invalid(
            path.field("duration_ms"),
            format!(
                "must be between 1 and {MAX_HORIZON_MS} ms (a day), got {d} (the window would end at {end} ms)"
            ),
        );
    }
    Ok(())
}

/// A windowed fault's length (not a crash's restart delay).
fn duration(f: &Fault) -> Option<u64> {
    match f {
        Fault::Crash(crate::model::fault::Crash { .. })
        | Fault::RedisRestart(crate::model::fault::RedisRestart { .. }) => None,
        _ => f.end_ms().map(|end| end.saturating_sub(f.at_ms())),
    }
}

fn lease_range(field: Path<'_>, ms: u64, min: u64) -> Result<(), SimError> {
    match lease_out_of_range(ms, min) {
        Some(reason) => invalid(field, reason),
        None => Ok(()),
    }
}

/// Why a wait or lease of `ms` is refused, if it is.
pub(crate) fn lease_out_of_range(ms: u64, min: u64) -> Option<String> {
    (ms < min || ms > MAX_LEASE_MS).then(|| {
        format!(
            "must be between {min} and {MAX_LEASE_MS} ms (Redis refuses an expiry past a 64-bit ms timestamp), got {ms}"
        )
    })
}

pub(crate) fn invalid<T>(field: impl std::fmt::Display, reason: String) -> Result<T, SimError> {
    Err(SimError::Invalid {
        field: field.to_string(),
        reason,
    })
}
