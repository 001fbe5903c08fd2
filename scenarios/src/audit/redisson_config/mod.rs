//! A Redisson user's own config file, read as Redisson's `Config` reads it.
//!
//! [`RedissonConfig::read`] takes the text of a `Config.fromYAML` (or
//! 3.x `Config.fromJSON`) file and the Redisson [`Version`] it is used
//! with, and gives the settings locksim models, with Redisson's default
//! for that release wherever the file leaves one out, plus every key it
//! read: the ones locksim models, the known settings it does not
//! (`unmodelled`) and the keys Redisson's `Config` does not know at that
//! release (`unknown`: reported, not fatal here; Redisson 3.x's Jackson
//! refuses them, 4.x's SnakeYAML skips them). [`RedissonConfig::apply`]
//! puts the modelled values on a [`lockcore::ConfigBuilder`].
//!
//! Field names and defaults come from Redisson's source at every tag
//! (`fields.rs`, `defaults.rs`). Layout: `fields` (the known keys per
//! release), `defaults` (the modelled settings' defaults), `tree` (the
//! file as a tree with lines), `read` (walking it), `error`.

mod defaults;
mod error;
mod fields;
mod read;
mod tree;
mod values;

use lockcore::{ConfigBuilder, Release, Version};
use serde::Serialize;

pub use error::ConfigError;

/// Which syntax the file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// `Config.fromYAML`.
    Yaml,
    /// `Config.fromJSON` (3.x; 4.x's `fromYAML` reads it as YAML).
    Json,
}

impl Format {
    /// JSON for a `.json` path, YAML otherwise.
    pub fn of_path(path: &std::path::Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("json") => Format::Json,
            _ => Format::Yaml,
        }
    }
}

/// How the client reaches Redis: the config's one server block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// `singleServerConfig`.
    Single,
    /// `replicatedServersConfig`.
    Replicated,
    /// `sentinelServersConfig`.
    Sentinel,
    /// `clusterServersConfig`.
    Cluster,
    /// `masterSlaveServersConfig`.
    MasterSlave,
}

impl Mode {
    /// All modes, in Redisson's `Config` order of checks.
    pub const ALL: [Mode; 5] = [
        Mode::Single,
        Mode::Replicated,
        Mode::Sentinel,
        Mode::Cluster,
        Mode::MasterSlave,
    ];

    /// The top-level key of its block.
    pub fn key(self) -> &'static str {
        match self {
            Mode::Single => "singleServerConfig",
            Mode::Replicated => "replicatedServersConfig",
            Mode::Sentinel => "sentinelServersConfig",
            Mode::Cluster => "clusterServersConfig",
            Mode::MasterSlave => "masterSlaveServersConfig",
        }
    }

    /// Whether Redisson `version` has this mode (replicated from 3.2.4).
    pub fn known_at(self, version: Version) -> bool {
        self != Mode::Replicated || fields::config_version(version) >= Version::new(3, 2, 4)
    }
}

/// The pause before a timed-out command is sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum RetryPause {
    /// `retryInterval` (to 3.47 the only form; 3.48–3.52 a
    /// `ConstantDelay`): the same pause every time.
    Interval {
        /// The pause.
        ms: u64,
    },
    /// `!<org.redisson.config.ConstantDelay> {delay: ...}`.
    Constant {
        /// The pause.
        ms: u64,
    },
    /// `!<org.redisson.config.EqualJitterDelay> {baseDelay, maxDelay}`.
    EqualJitter {
        /// `baseDelay`.
        base_ms: u64,
        /// `maxDelay`.
        max_ms: u64,
    },
    /// `FullJitterDelay` (not modelled by lockcore).
    FullJitter {
        /// `baseDelay`.
        base_ms: u64,
        /// `maxDelay`.
        max_ms: u64,
    },
    /// `DecorrelatedJitterDelay` (not modelled by lockcore).
    DecorrelatedJitter {
        /// `baseDelay`.
        base_ms: u64,
        /// `maxDelay`.
        max_ms: u64,
    },
}

/// One key the file sets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting {
    /// `lockWatchdogTimeout`, `sentinelServersConfig.timeout`...
    pub path: String,
    /// Its value as JSON (passwords masked).
    pub value: serde_json::Value,
    /// The key's line (1-based).
    pub line: usize,
    /// Whether locksim models it.
    pub modelled: bool,
}

/// A key and its line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyAt {
    /// The key's path.
    pub path: String,
    /// Its line (1-based).
    pub line: usize,
}

/// A Redisson config as Redisson `version` reads it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RedissonConfig {
    /// The release the file was read for.
    #[serde(serialize_with = "display")]
    pub version: Version,
    /// The server block.
    pub mode: Mode,
    /// `lockWatchdogTimeout`.
    pub lock_watchdog_timeout_ms: u64,
    /// `lockWatchdogBatchSize` (3.44+; `None` before).
    pub lock_watchdog_batch_size: Option<u32>,
    /// `timeout`.
    pub timeout_ms: u64,
    /// `retryAttempts`.
    pub retry_attempts: u32,
    /// `retryInterval` (1 500 ms unless set; 4.x's reader ignores the
    /// file's, see `ignored`).
    pub retry_interval_ms: u64,
    /// The pause before a resend, as the release computes it:
    /// `retryInterval` to 3.47, `retryDelay` (or a `retryInterval` set
    /// in a 3.x file) from 3.48.
    pub retry_pause: RetryPause,
    /// `pingConnectionInterval` (3.5.6+).
    pub ping_connection_interval_ms: Option<u64>,
    /// `subscriptionTimeout` (3.24+).
    pub subscription_timeout_ms: Option<u64>,
    /// `slavesSyncTimeout` (3.22+, top level).
    pub slaves_sync_timeout_ms: Option<u64>,
    /// `clusterServersConfig.scanInterval`, where set.
    pub scan_interval_ms: Option<u64>,
    /// Every key read, in file order.
    pub settings: Vec<Setting>,
    /// Keys Redisson's `Config` does not know at that release.
    pub unknown: Vec<KeyAt>,
    /// Whether Redisson itself refuses a file with unknown keys
    /// (Jackson, to 3.x) rather than skipping them (SnakeYAML, 4.x).
    pub unknown_keys_fatal_in_redisson: bool,
    /// Known keys Redisson's reader skips at that release (`retryInterval`
    /// from 4.0: `ConfigSupport`'s `ignoredProperties`).
    pub ignored: Vec<KeyAt>,
    /// Known Redisson settings locksim does not model.
    pub unmodelled: Vec<KeyAt>,
}

fn display<S: serde::Serializer>(v: &Version, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

impl RedissonConfig {
    /// Reads `text` as Redisson `version` reads it.
    pub fn read(text: &str, format: Format, version: Version) -> Result<Self, ConfigError> {
        let tree = match format {
            Format::Yaml => tree::from_yaml(text)?,
            Format::Json => tree::from_json(text)?,
        };
        read::read(&tree, version)
    }

    /// [`RedissonConfig::read`] with the version as the user typed it
    /// (`3.23.4`, `redisson-3.23.4`).
    pub fn read_for(text: &str, format: Format, version: &str) -> Result<Self, ConfigError> {
        Self::read(text, format, version.parse()?)
    }

    /// Puts the release and the modelled settings on `builder`. A
    /// `FullJitterDelay` or `DecorrelatedJitterDelay` is not modelled
    /// (listed in `unmodelled`): the builder keeps the release's pause.
    pub fn apply<'b>(&self, builder: &'b mut ConfigBuilder) -> &'b mut ConfigBuilder {
        builder
            .release(Release::version(self.version))
            .watchdog_timeout(self.lock_watchdog_timeout_ms)
            .response_timeout(self.timeout_ms)
            .retry_attempts(self.retry_attempts);
        match self.retry_pause {
            RetryPause::Interval { ms } | RetryPause::Constant { ms } => {
                builder.retry_interval(ms);
            }
            RetryPause::EqualJitter { base_ms, max_ms } => {
                builder.retry_delay(lockcore::RetryDelay::EqualJitter {
                    base: lockcore::Millis(base_ms),
                    max: lockcore::Millis(max_ms),
                });
            }
            RetryPause::FullJitter { .. } | RetryPause::DecorrelatedJitter { .. } => {}
        }
        if let Some(ms) = self.slaves_sync_timeout_ms {
            builder.slaves_sync_timeout(ms);
        }
        if let Some(ms) = self.scan_interval_ms {
            builder.scan_interval(ms);
        }
        if let Some(n) = self.lock_watchdog_batch_size {
            builder.watchdog_batch_size(n);
        }
        builder
    }
}

#[cfg(test)]
mod tests;
