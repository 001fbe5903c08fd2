//! `locksim audit`.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use lockcore::{Release, Version};

use crate::audit::{self, AuditOptions, Tailor, Usage};
use crate::cli::{Execute, Exit, Io};
use crate::sweep::shell_word;
use crate::{InputError, SeedRange, Settings, render_header, render_verdict};

/// Your Redisson version and config in: the lock defects you are exposed
/// to, what your settings survive, and the upgrade that removes the
/// defects. Exits 1 when it finds a defect, so it can gate a CI job.
#[derive(Debug, Args, PartialEq)]
pub struct AuditArgs {
    /// The Redisson version you run (`3.23.4`).
    #[arg(long, value_parser = parse_version)]
    pub redisson: Version,
    /// Your Redisson config file, YAML or JSON, as `Config.fromYAML` or
    /// `Config.fromJSON` reads it; without it, Redisson's defaults.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// How your application uses the lock (a TOML file: `calls`,
    /// `lease_ms`, `wait_ms`, `work_ms`); without it, explore's mix.
    #[arg(long)]
    pub usage: Option<PathBuf>,
    /// How many seeds to explore.
    #[arg(long, default_value_t = audit::DEFAULT_SEEDS)]
    pub seeds: u64,
    /// The first seed.
    #[arg(long, default_value_t = 0)]
    pub from: u64,
    /// Print the audit as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also write the report (HTML, Markdown, each exposure's minimal
    /// scenario and chart) into this directory.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Replay one explored seed with your settings and usage (what an
    /// exposure's replay command does) instead of auditing.
    #[arg(long)]
    pub replay: Option<u64>,
    /// Your Redis is a Redis Cluster behind a proxy on one address
    /// (Envoy, Twemproxy, a managed endpoint) that your
    /// `singleServerConfig` points at: a script whose keys hash to
    /// different slots is refused with CROSSSLOT. A config cannot say so.
    #[arg(long)]
    pub behind_proxy: bool,
    /// Your `singleServerConfig` points at one address in front of a
    /// primary with replicas that fails over behind it (Azure Cache for
    /// Redis Standard or Premium, ElastiCache's primary endpoint, a
    /// virtual IP). Single-server mode sends no WAIT, so a failover can
    /// promote a replica that never got a lock. A config cannot say so.
    #[arg(long)]
    pub replicated_endpoint: bool,
}

fn parse_version(s: &str) -> Result<Version, String> {
    s.parse::<Version>().map_err(|e| e.to_string())
}

impl Execute for AuditArgs {
    fn execute(&self, io: &mut Io<'_>) -> Result<Exit, InputError> {
        let options = self.options()?;
        if let Some(seed) = self.replay {
            return replay(seed, &options, io.out);
        }
        let found = audit::audit(&options)?;
        if self.json {
            let text = serde_json::to_string_pretty(&found).unwrap_or_default();
            let _ = writeln!(io.out, "{text}");
        } else {
            let _ = write!(io.out, "{}", audit::render::text(&found));
        }
        if let Some(dir) = &self.report {
            crate::write_report(dir, &audit::render::files(&found)?)?;
            let _ = writeln!(
                io.err,
                "report: {} and {}",
                dir.join("index.html").display(),
                dir.join("README.md").display()
            );
        }
        Ok(if found.exposed() {
            Exit::Unexpected
        } else {
            Exit::AsExpected
        })
    }
}

impl AuditArgs {
    /// The audit the flags ask for, its files read.
    fn options(&self) -> Result<AuditOptions, InputError> {
        let release = Release::version(self.redisson);
        let (settings, notes) = match &self.config {
            Some(path) => audit::config_file(path, self.redisson)?,
            None => (Settings::default(), Vec::new()),
        };
        let mut settings = settings;
        let config = || self.config.as_ref().map(|p| p.display().to_string());
        for (given, flag) in [
            (self.behind_proxy, "--behind-proxy"),
            (self.replicated_endpoint, "--replicated-endpoint"),
        ] {
            if given && settings.cluster {
                let config = config().unwrap_or_default();
                return Err(InputError::FlagWithCluster { flag, config });
            }
        }
        if self.behind_proxy {
            if settings.replicated {
                let config = self.config.as_ref().map(|p| p.display().to_string());
                return Err(InputError::ProxyWithReplicas(config.unwrap_or_default()));
            }
            settings.proxy = true;
        }
        if self.replicated_endpoint {
            let config = self.config.as_ref().map(|p| p.display().to_string());
            if settings.replicated {
                return Err(InputError::ReplicatedEndpoint(format!(
                    "{} names replicas, so Redisson already waits for them; the flag describes a singleServerConfig",
                    config.unwrap_or_default()
                )));
            }
            if self.behind_proxy {
                return Err(InputError::ReplicatedEndpoint(
                    "a cluster behind a proxy is modelled without replicas yet; give one of --behind-proxy and --replicated-endpoint".to_owned(),
                ));
            }
            settings.replicated_endpoint = true;
        }
        let usage = match &self.usage {
            Some(path) => Some(Usage::parse(&audit::read(path)?, &path.display().to_string())?),
            None => None,
        };
        Ok(AuditOptions {
            release,
            settings,
            tailor: Tailor(usage),
            range: SeedRange::new(self.from, self.seeds)?,
            notes,
            command: self.command(),
        })
    }

    /// The command that repeats this audit.
    fn command(&self) -> String {
        let mut c = format!("locksim audit --redisson {}", self.redisson);
        for (flag, path) in [("--config", &self.config), ("--usage", &self.usage)] {
            if let Some(p) = path {
                c.push_str(&format!(" {flag} {}", shell_word(&p.display().to_string())));
            }
        }
        if self.behind_proxy {
            c.push_str(" --behind-proxy");
        }
        if self.replicated_endpoint {
            c.push_str(" --replicated-endpoint");
        }
        c
    }
}

/// Prints one seed's run and its defects' statuses.
fn replay(seed: u64, o: &AuditOptions, out: &mut dyn Write) -> Result<Exit, InputError> {
    let (trial, statuses) = audit::replay(seed, o)?;
    let description = format!("seed {seed} of {}", o.command);
    let _ = write!(out, "{}", render_header(&trial, &description, None));
    let _ = writeln!(out, "--- timeline\n{}--- verdict", trial.run.history);
    let _ = write!(out, "{}", render_verdict(&trial));
    for s in &statuses {
        let _ = writeln!(out, "defect    {}", s.title());
    }
    Ok(if statuses.is_empty() {
        Exit::AsExpected
    } else {
        Exit::Unexpected
    })
}
