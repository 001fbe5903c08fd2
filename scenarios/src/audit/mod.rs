//! `locksim audit`: a Redisson user's own version, config and usage in;
//! the lock defects they are exposed to, what their settings survive,
//! and the upgrade that removes the defects out.
//!
//! An audit is explore run as the user's application would run: every
//! explored seed's clients get the user's settings ([`crate::Settings`],
//! read from their Redisson config by [`redisson_config`]) and its
//! scripts the user's calls ([`Tailor`], from a usage file). Each
//! defective run is attributed from the run alone, as `locksim explore`
//! attributes it, and the defects are grouped by the upstream issue
//! that explains them ([`exposure`]). Then:
//!
//! - the envelope of the user's `lockWatchdogTimeout` with their
//!   settings (the longest pause, starvation, partition and Redis pause
//!   the lock survives, and the takeover after a crash);
//! - the upgrade: the smallest release with every fix of what was found,
//!   audited again (and again, while it shows a defect a later release
//!   fixes), with the behaviour changes in between ([`upgrade`]);
//! - misuse: what in the usage breaks the lock whatever the release
//!   ([`misuse`]).
//!
//! Everything is a pure function of the inputs and the seed range:
//! the same audit gives the same bytes, however many threads run it.

pub mod exposure;
pub mod misuse;
pub mod redisson_config;
pub mod render;
pub mod upgrade;
pub mod usage;

use lockcore::{Release, Version};
use serde::Serialize;

pub use self::exposure::{Exposure, Status, Sweep, audited_spec};
use self::redisson_config::{Mode, RedissonConfig, RetryPause};
pub use self::upgrade::{Change, Upgrade};
pub use self::usage::{Acquire, Tailor, Usage};
use crate::{EnvelopeConfig, InputError, SeedRange, Settings, Trial};

/// The seeds an audit explores unless told: enough to meet the common
/// defects of a release in a few seconds on two cores.
pub const DEFAULT_SEEDS: u64 = 20_000;

/// What to audit.
#[derive(Debug, Clone)]
pub struct AuditOptions {
    /// The user's Redisson release.
    pub release: Release,
    /// Their client settings and deployment.
    pub settings: Settings,
    /// Their usage of the lock (none: the explorer's own mix).
    pub tailor: Tailor,
    /// The seeds explored.
    pub range: SeedRange,
    /// What in their config the audit could not model, one line each.
    pub notes: Vec<String>,
    /// The command that repeats this audit, for each exposure's replay.
    pub command: String,
}

/// What an audit found.
#[derive(Debug, Clone, Serialize)]
pub struct Audit {
    /// The release audited.
    pub release: String,
    /// The settings it ran with.
    pub settings: Settings,
    /// The usage it ran with.
    pub usage: Option<Usage>,
    /// The seeds explored.
    pub seeds: String,
    /// The runs and the defects they showed.
    #[serde(flatten)]
    pub sweep: Sweep,
    /// What the settings survive, when the watchdog timeout can be searched.
    pub envelope: Option<crate::Row>,
    /// The release that removes the defects found, if one does.
    pub upgrade: Option<Upgrade>,
    /// What in the usage breaks the lock whatever the release.
    pub misuse: Vec<String>,
    /// What the audit could not model.
    pub notes: Vec<String>,
}

impl Audit {
    /// Whether it found a defect (`locksim audit` then exits 1).
    pub fn exposed(&self) -> bool {
        !self.sweep.exposures.is_empty()
    }
}

/// The settings a Redisson config file gives a client of `version`, and
/// what in it the audit cannot model, one line each.
pub fn config_file(
    path: &std::path::Path,
    version: Version,
) -> Result<(Settings, Vec<String>), InputError> {
    let origin = path.display().to_string();
    let text = read(path)?;
    let format = redisson_config::Format::of_path(path);
    let config = RedissonConfig::read(&text, format, version).map_err(|e| InputError::Invalid {
        origin,
        location: None,
        message: e.to_string(),
    })?;
    Ok((settings_of(&config), notes_of(&config)))
}

/// A file's text, or a clear error naming it.
pub fn read(path: &std::path::Path) -> Result<String, InputError> {
    std::fs::read_to_string(path).map_err(|e| InputError::Unreadable {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

/// What the audit models of `config`.
pub fn settings_of(config: &RedissonConfig) -> Settings {
    let (retry_interval_ms, retry_jitter) = match config.retry_pause {
        RetryPause::Interval { ms } | RetryPause::Constant { ms } => (Some(ms), None),
        RetryPause::EqualJitter { base_ms, max_ms } => {
            (None, Some(sim::RetryJitter { base_ms, max_ms }))
        }
        // Not modelled (listed as such): the release's own pause stands.
        RetryPause::FullJitter { .. } | RetryPause::DecorrelatedJitter { .. } => (None, None),
    };
    Settings {
        watchdog_timeout_ms: config.lock_watchdog_timeout_ms,
        watchdog_batch_size: config.lock_watchdog_batch_size,
        timeout_ms: Some(config.timeout_ms),
        retry_attempts: Some(config.retry_attempts),
        retry_interval_ms,
        retry_jitter,
        slaves_sync_timeout_ms: config.slaves_sync_timeout_ms,
        scan_interval_ms: config.scan_interval_ms,
        replicated: !matches!(config.mode, Mode::Single | Mode::Cluster),
        sentinel: config.mode == Mode::Sentinel,
        proxy: false,
        replicated_endpoint: false,
        cluster: config.mode == Mode::Cluster,
    }
}

/// What the audit could not take into account of `config`.
pub fn notes_of(config: &RedissonConfig) -> Vec<String> {
    let mut notes = Vec::new();
    match config.mode {
        Mode::Single | Mode::Replicated | Mode::MasterSlave => {}
        Mode::Sentinel => notes.push(
            "sentinelServersConfig: modelled as a primary with replicas, with Sentinel mode's pub/sub after a restart of the primary (#6026); Sentinel's own discovery and failover are not (yet)".to_owned(),
        ),
        Mode::Cluster => notes.push(
            "clusterServersConfig: modelled as a cluster of three masters (or the two or three explore drew) in cluster mode, each lock on its slot's master and the watchdog renewing slot by slot, each master with one replica (or the two explore drew), which the lock scripts wait for (WAIT) and a shard-failover promotes, MOVED and ASK followed when a slot-migration moves a lock's slot, and the topology scan (CLUSTER NODES every scanInterval) moving it for good (a cluster behind a proxy reached with singleServerConfig is: --behind-proxy)".to_owned(),
        ),
    }
    if matches!(
        config.retry_pause,
        RetryPause::FullJitter { .. } | RetryPause::DecorrelatedJitter { .. }
    ) {
        notes.push("retryDelay: only EqualJitterDelay and ConstantDelay are modelled; the release's default pause was used".to_owned());
    }
    for k in &config.unknown {
        let redisson = if config.unknown_keys_fatal_in_redisson {
            "Redisson itself refuses the file"
        } else {
            "Redisson skips it"
        };
        notes.push(format!(
            "`{}` (line {}): not a setting of Redisson {}; {redisson}",
            k.path, k.line, config.version
        ));
    }
    for k in &config.ignored {
        notes.push(format!(
            "`{}` (line {}): Redisson {} ignores it",
            k.path, k.line, config.version
        ));
    }
    let unmodelled: Vec<String> = config
        .unmodelled
        .iter()
        .map(|k| format!("`{}`", k.path))
        .collect();
    if !unmodelled.is_empty() {
        notes.push(format!(
            "settings read but not modelled: {}",
            unmodelled.join(", ")
        ));
    }
    notes
}

/// Runs an audit.
pub fn audit(o: &AuditOptions) -> Result<Audit, InputError> {
    let mut sweep = exposure::sweep(o.range, o.release, &o.settings, &o.tailor);
    for (n, e) in sweep.exposures.iter_mut().enumerate() {
        e.replay = format!("{} --replay {}", o.command, e.seeds[0]);
        e.shrink(o.release, n + 1);
    }
    let mut notes = o.notes.clone();
    let envelope = envelope_row(o, &mut notes)?;
    let upgrade = upgrade::upgrade(o, &sweep);
    Ok(Audit {
        release: o.release.to_string(),
        settings: o.settings.clone(),
        usage: o.tailor.0.clone(),
        seeds: o.range.to_string(),
        misuse: misuse::misuse(o, &sweep),
        sweep,
        envelope,
        upgrade,
        notes,
    })
}

/// Seed `seed`'s run as the audit made it, judged, with the status of
/// each of its defects: what an exposure's replay command shows.
pub fn replay(seed: u64, o: &AuditOptions) -> Result<(Trial, Vec<Status>), InputError> {
    let spec = audited_spec(seed, o.release, &o.settings, &o.tailor);
    let scenario = crate::Scenario {
        name: format!("audit-{seed}"),
        description: format!(
            "Seed {seed} of locksim audit under {}: an explored run with the audited settings and usage.",
            o.release
        ),
        source: None,
        sim: spec,
        expect: Default::default(),
        history: None,
    };
    let trial = Trial::run(&scenario, None, None)?;
    let statuses = crate::defects_of(&scenario.sim, &trial.run)
        .iter()
        .map(Status::of)
        .collect();
    Ok((trial, statuses))
}

/// The envelope row of the user's watchdog timeout with their settings.
fn envelope_row(
    o: &AuditOptions,
    notes: &mut Vec<String>,
) -> Result<Option<crate::Row>, InputError> {
    let w = o.settings.watchdog_timeout_ms;
    if !(crate::envelope::MIN_WATCHDOG_MS..=crate::envelope::MAX_WATCHDOG_MS).contains(&w) {
        notes.push(format!(
            "no envelope: lockWatchdogTimeout {w} ms is outside the {} to {} ms it is searched over",
            crate::envelope::MIN_WATCHDOG_MS,
            crate::envelope::MAX_WATCHDOG_MS
        ));
        return Ok(None);
    }
    let config = EnvelopeConfig {
        watchdogs_ms: vec![w],
        settings: Some(o.settings.clone()),
        ..EnvelopeConfig::new(o.release)
    };
    Ok(crate::envelope(&config)?.rows.into_iter().next())
}

#[cfg(test)]
mod tests;
