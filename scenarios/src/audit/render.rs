//! An audit as text (the terminal's, also the report's Markdown body)
//! and as a report directory: a self-contained HTML page, Markdown, and
//! each exposure's minimal scenario with its chart.

use std::fmt::Write;

use super::{Audit, Exposure, Upgrade};
use crate::{InputError, ReportFile, Row, Trial};

/// The audit as text, section by section: what a team lead pastes into
/// a ticket.
pub fn text(a: &Audit) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "locksim audit of Redisson {}", a.release);
    let _ = writeln!(s, "settings  {}", settings_line(a));
    let _ = writeln!(s, "usage     {}", usage_line(a));
    let _ = writeln!(s, "explored  seeds {}: {}", a.seeds, runs_line(a));
    exposure(&mut s, a);
    envelope(&mut s, a.envelope.as_ref(), a.settings.watchdog_timeout_ms);
    upgrade(&mut s, a);
    let _ = writeln!(s, "\nmisuse");
    if a.misuse.is_empty() {
        let _ = writeln!(s, "  none found");
    }
    for m in &a.misuse {
        let _ = writeln!(s, "  - {m}");
    }
    if !a.notes.is_empty() {
        let _ = writeln!(s, "\nnot modelled");
        for n in &a.notes {
            let _ = writeln!(s, "  - {n}");
        }
    }
    s
}

fn settings_line(a: &Audit) -> String {
    let st = &a.settings;
    let or_default = |v: Option<String>| v.unwrap_or_else(|| "default".to_owned());
    let retry = match (st.retry_interval_ms, st.retry_jitter) {
        (Some(ms), _) => format!("retryInterval={ms}ms"),
        (None, Some(j)) => format!("retryDelay=EqualJitter({}ms, {}ms)", j.base_ms, j.max_ms),
        (None, None) => "retryDelay=default".to_owned(),
    };
    format!(
        "lockWatchdogTimeout={}ms timeout={} retryAttempts={} {retry} {}",
        st.watchdog_timeout_ms,
        or_default(st.timeout_ms.map(|ms| format!("{ms}ms"))),
        or_default(st.retry_attempts.map(|n| n.to_string())),
        if st.cluster {
            "cluster mode: a Redis Cluster, each lock on its slot's master, each master with a replica (WAIT after lock scripts)"
        } else if st.replicated {
            "with replicas (WAIT after lock scripts)"
        } else if st.replicated_endpoint {
            "single server: one endpoint in front of a primary with replicas (no WAIT; a failover can lose a lock)"
        } else if st.proxy {
            "single server: a cluster behind a proxy (CROSSSLOT across slots)"
        } else {
            "single server without replicas (one in front of replicas: --replicated-endpoint)"
        }
    )
}

fn usage_line(a: &Audit) -> String {
    let Some(u) = &a.usage else {
        return "explore's mix of lock, tryLock and the async API, with the watchdog or leases"
            .to_owned();
    };
    let calls = if u.calls.is_empty() {
        "every acquire call".to_owned()
    } else {
        let names: Vec<&str> = u.calls.iter().map(|c| c.name()).collect();
        names.join(", ")
    };
    let lease = u
        .lease_ms
        .map_or("the watchdog".to_owned(), |ms| format!("a {ms} ms lease"));
    let work = u
        .work_ms
        .map_or(String::new(), |ms| format!(", work up to {ms} ms"));
    format!("{calls} with {lease}{work}")
}

fn runs_line(a: &Audit) -> String {
    let sw = &a.sweep;
    let broke: u64 = sw.by_cause.values().sum();
    let mut parts: Vec<String> = sw
        .by_cause
        .iter()
        .map(|(cause, n)| format!("{n} {cause}"))
        .collect();
    if sw.refused > 0 {
        parts.push(format!(
            "{} left out (invalid with these settings)",
            sw.refused
        ));
    }
    format!(
        "{} runs, {broke} broke an invariant ({})",
        sw.runs,
        parts.join(", ")
    )
}

fn exposure(s: &mut String, a: &Audit) {
    let n = a.sweep.exposures.len();
    let _ = writeln!(s, "\nexposure  {n} defect(s) found");
    for (i, e) in a.sweep.exposures.iter().enumerate() {
        exposure_item(s, i + 1, e);
    }
}

fn exposure_item(s: &mut String, n: usize, e: &Exposure) {
    let _ = writeln!(s, "  {n}. {}", e.status.title());
    let invariants: Vec<String> = e.invariants.iter().map(|i| i.to_string()).collect();
    let seeds: Vec<String> = e.seeds.iter().map(u64::to_string).collect();
    let _ = writeln!(
        s,
        "     {} in {} run(s) (seeds {}{})",
        invariants.join(", "),
        e.runs,
        seeds.join(", "),
        if e.runs > e.seeds.len() as u64 {
            ", ..."
        } else {
            ""
        }
    );
    match &e.status {
        super::Status::Open { path, .. } | super::Status::Unreported { path } => {
            let _ = writeln!(s, "     {path}");
        }
        _ => {}
    }
    let _ = writeln!(s, "     replay: {}", e.replay);
}

fn envelope(s: &mut String, row: Option<&Row>, watchdog_ms: u64) {
    let Some(row) = row else { return };
    let _ = writeln!(
        s,
        "\nenvelope  with lockWatchdogTimeout {watchdog_ms} ms and these settings, at the worst moment the lock survives"
    );
    for (probe, limit) in &row.limits {
        let at_least = if limit.at_ceiling { "at least " } else { "" };
        let _ = writeln!(
            s,
            "  {:<12} {at_least}{}",
            probe.name(),
            sim::SimTime::from_ms(limit.survives_ms)
        );
    }
    let _ = writeln!(
        s,
        "  takeover     another client gets the lock {} after its holder crashes",
        sim::SimTime::from_ms(row.takeover_ms)
    );
}

fn upgrade(s: &mut String, a: &Audit) {
    let _ = writeln!(s, "\nupgrade");
    let Some(u) = &a.upgrade else {
        let why = if a.exposed() {
            "no release removes what was found"
        } else {
            "nothing found that a release fixes"
        };
        let _ = writeln!(s, "  none: {why}");
        return;
    };
    upgrade_body(s, u);
}

fn upgrade_body(s: &mut String, u: &Upgrade) {
    let _ = writeln!(s, "  to {}, which removes", u.to);
    for r in &u.removes {
        let _ = writeln!(s, "    - {r}");
    }
    for t in &u.tried {
        let _ = writeln!(s, "  (tried {t})");
    }
    if u.after.is_empty() {
        let _ = writeln!(s, "  audited under {}: no defect in {} runs", u.to, u.runs);
    } else {
        let _ = writeln!(s, "  audited under {}: still shows", u.to);
        for e in &u.after {
            let _ = writeln!(s, "    - {} ({} run(s))", e.status.name(), e.runs);
        }
    }
    for stay in &u.stays {
        let _ = writeln!(s, "  stays after any upgrade: {stay}");
    }
    for un in &u.unattributed {
        let seen = if un.seen_after {
            "still seen"
        } else {
            "not seen"
        };
        let _ = writeln!(
            s,
            "  no fix known (unattributed), {seen} under {}: {}",
            u.to, un.signature
        );
    }
    let _ = writeln!(s, "  behaviour changes on the way ({}):", u.changes.len());
    for c in &u.changes {
        let fix = if c.fixes { "fix" } else { "change" };
        let _ = writeln!(
            s,
            "    {} {} ({fix}, {}): {}",
            c.release, c.switch, c.upstream, c.summary
        );
    }
}

/// The report's files: `README.md`, `index.html`, and for exposure `n`
/// `exposure-<n>.toml` with its chart `exposure-<n>.svg`.
pub fn files(a: &Audit) -> Result<Vec<ReportFile>, InputError> {
    let body = text(a);
    let mut files = vec![ReportFile {
        path: "README.md".to_owned(),
        contents: format!(
            "# locksim audit of Redisson {}\n\n```text\n{body}```\n",
            a.release
        ),
    }];
    let mut page = crate::html::page_start(&format!("locksim audit of Redisson {}", a.release));
    let _ = writeln!(page, "<h1>locksim audit of Redisson {}</h1>", a.release);
    let _ = writeln!(page, "<pre>{}</pre>", crate::chart::escape(&body));
    for (i, e) in a.sweep.exposures.iter().enumerate() {
        let Some(scenario) = &e.minimal else { continue };
        let trial = Trial::run(scenario, None, None)?;
        files.push(ReportFile {
            path: e.file(i + 1),
            contents: scenario.to_toml(),
        });
        files.push(ReportFile {
            path: format!("exposure-{}.svg", i + 1),
            contents: crate::render_chart(&trial.run, &scenario.name),
        });
        let _ = writeln!(
            page,
            "<h2>{}. {}</h2><p>minimal scenario: <a href=\"{}\">{}</a> (<code>locksim run</code> it)</p>",
            i + 1,
            crate::chart::escape(&e.status.title()),
            e.file(i + 1),
            e.file(i + 1)
        );
        crate::html::run_section(&mut page, scenario, &trial);
    }
    crate::html::page_end(&mut page);
    files.push(ReportFile {
        path: "index.html".to_owned(),
        contents: page,
    });
    Ok(files)
}
