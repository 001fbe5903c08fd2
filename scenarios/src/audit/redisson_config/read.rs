//! Walking the file's tree as Redisson's `Config` binds it.

use lockcore::Version;

use super::defaults::{self as d, has};
use super::fields::{Kind, Scope, lookup};
use super::tree::{Entry, Node, Value};
use super::values::{At, JAVA_INT_MAX, duration_ms, integer, ranged};
use super::{ConfigError, KeyAt, Mode, RedissonConfig, RetryPause, Setting};

/// The longest `lockWatchdogTimeout` or `slavesSyncTimeout` taken: a year.
/// Redisson's field is a `long`, but a lease of years is a typo, and
/// locksim's virtual clock needs room to run past it.
const LONG_MS_MAX: i64 = 365 * 24 * 3_600_000;

/// Reads the whole file.
pub(super) fn read(tree: &Node, version: Version) -> Result<RedissonConfig, ConfigError> {
    let entries = match &tree.value {
        Value::Map(entries) => entries.as_slice(),
        Value::Null => &[],
        other => {
            return Err(ConfigError::NotAMapping {
                line: tree.line,
                found: other.describe(),
            });
        }
    };
    let (mode, block) = find_mode(entries, version)?;
    let mut reader = Reader::new(version, mode);
    // File order, the block where it stands: the report lists the keys
    // as the user wrote them.
    for entry in entries {
        if entry.key == mode.key() {
            reader.block(block, mode)?;
        } else {
            reader.entry(entry, &entry.key, &[Scope::Top])?;
        }
    }
    Ok(reader.config)
}

/// The one server block, or why there is not exactly one.
fn find_mode(entries: &[Entry], version: Version) -> Result<(Mode, &Entry), ConfigError> {
    let known: Vec<Mode> = Mode::ALL
        .into_iter()
        .filter(|m| m.known_at(version))
        .collect();
    let names = || known.iter().map(|m| m.key()).collect::<Vec<_>>().join(", ");
    let mut found: Option<(Mode, &Entry)> = None;
    for entry in entries {
        match known.iter().find(|m| m.key() == entry.key) {
            Some(&mode) => {
                if let Some((first, at)) = found {
                    return Err(ConfigError::TwoModes {
                        first: first.key().to_owned(),
                        first_line: at.line,
                        second: mode.key().to_owned(),
                        line: entry.line,
                    });
                }
                found = Some((mode, entry));
            }
            // `clusterServerConfig`, `elasticacheServersConfig` (gone
            // in 3.10.0): a server block Redisson cannot bind.
            None if entry.key.ends_with("ServersConfig") || entry.key.ends_with("ServerConfig") => {
                return Err(ConfigError::UnknownMode {
                    key: entry.key.clone(),
                    line: entry.line,
                    version: version.to_string(),
                    expected: names(),
                });
            }
            None => {}
        }
    }
    found.ok_or_else(|| ConfigError::NoMode { expected: names() })
}

/// The classes a mode's block binds to.
fn mode_scopes(mode: Mode) -> Vec<Scope> {
    match mode {
        Mode::Single => vec![Scope::Server, Scope::Single],
        Mode::Sentinel => vec![Scope::Server, Scope::Replicas, Scope::Sentinel],
        Mode::Cluster => vec![Scope::Server, Scope::Replicas, Scope::Cluster],
        Mode::Replicated => vec![Scope::Server, Scope::Replicas, Scope::Replicated],
        Mode::MasterSlave => vec![Scope::Server, Scope::Replicas, Scope::MasterSlave],
    }
}

/// What a known key does in locksim.
enum Use {
    /// A setting lockcore takes.
    Modelled,
    /// Read and reported, not modelled.
    Unmodelled,
    /// Skipped by Redisson's reader at this release.
    Ignored,
}

struct Reader {
    version: Version,
    config: RedissonConfig,
}

impl Reader {
    fn new(version: Version, mode: Mode) -> Reader {
        let retry_pause = if has(version, d::RETRY_DELAY_SINCE) {
            let (base_ms, max_ms) = d::RETRY_DELAY_MS;
            RetryPause::EqualJitter { base_ms, max_ms }
        } else {
            RetryPause::Interval {
                ms: d::RETRY_INTERVAL_MS,
            }
        };
        let since = |v: Version, value| has(version, v).then_some(value);
        Reader {
            version,
            config: RedissonConfig {
                version,
                mode,
                lock_watchdog_timeout_ms: d::LOCK_WATCHDOG_TIMEOUT_MS,
                lock_watchdog_batch_size: since(d::BATCH_SIZE_SINCE, d::LOCK_WATCHDOG_BATCH_SIZE),
                timeout_ms: d::TIMEOUT_MS,
                retry_attempts: d::retry_attempts(version),
                retry_interval_ms: d::RETRY_INTERVAL_MS,
                retry_pause,
                ping_connection_interval_ms: d::ping_connection_interval_ms(version),
                subscription_timeout_ms: has(version, d::SUBSCRIPTION_TIMEOUT_SINCE)
                    .then_some(d::SUBSCRIPTION_TIMEOUT_MS),
                slaves_sync_timeout_ms: has(version, d::SLAVES_SYNC_SINCE)
                    .then_some(d::SLAVES_SYNC_TIMEOUT_MS),
                scan_interval_ms: None,
                settings: Vec::new(),
                unknown: Vec::new(),
                unknown_keys_fatal_in_redisson: !has(version, d::SNAKEYAML_SINCE),
                ignored: Vec::new(),
                unmodelled: Vec::new(),
            },
        }
    }

    /// The server block's keys.
    fn block(&mut self, block: &Entry, mode: Mode) -> Result<(), ConfigError> {
        let Value::Map(entries) = &block.value.value else {
            return Err(At {
                key: mode.key(),
                line: block.line,
            }
            .wrong("a mapping of server settings", &block.value.value));
        };
        let scopes = mode_scopes(mode);
        for entry in entries {
            let path = format!("{}.{}", mode.key(), entry.key);
            self.entry(entry, &path, &scopes)?;
        }
        Ok(())
    }

    /// One key of the top level or of the server block.
    fn entry(&mut self, entry: &Entry, path: &str, scopes: &[Scope]) -> Result<(), ConfigError> {
        let key_at = KeyAt {
            path: path.to_owned(),
            line: entry.line,
        };
        let Some(field) = lookup(scopes, &entry.key, self.version) else {
            self.config.unknown.push(key_at);
            return Ok(());
        };
        let at = At {
            key: path,
            line: entry.line,
        };
        check_kind(&entry.value, field.kind, at)?;
        let used = self.modelled(field.scope, &entry.key, &entry.value, at)?;
        match used {
            Use::Modelled => {}
            Use::Unmodelled => self.config.unmodelled.push(key_at),
            Use::Ignored => self.config.ignored.push(key_at),
        }
        let masked = entry.key.to_ascii_lowercase().contains("password");
        self.config.settings.push(Setting {
            path: path.to_owned(),
            value: if masked {
                serde_json::Value::String("***".to_owned())
            } else {
                entry.value.value.to_json()
            },
            line: entry.line,
            modelled: matches!(used, Use::Modelled),
        });
        Ok(())
    }

    /// Reads a setting locksim models (or reports), with Redisson's
    /// bounds: `retryAttempts` "can't be negative or MAX_VALUE"
    /// (`BaseConfig.setRetryAttempts`, redisson-4.7.0), the others
    /// Java `int`s, and zero refused where lockcore cannot run it.
    fn modelled(
        &mut self,
        scope: Scope,
        key: &str,
        node: &Node,
        at: At<'_>,
    ) -> Result<Use, ConfigError> {
        let int = (0, JAVA_INT_MAX);
        let c = &mut self.config;
        match (scope, key) {
            (Scope::Top, "lockWatchdogTimeout") => {
                c.lock_watchdog_timeout_ms = ranged(
                    node,
                    at,
                    (3, LONG_MS_MAX),
                    "must be from 3 ms (a third of it is the renewal period) to a year",
                )?;
            }
            (Scope::Top, "lockWatchdogBatchSize") => {
                let n = ranged(node, at, (1, JAVA_INT_MAX), "must be from 1 to 2147483647")?;
                c.lock_watchdog_batch_size = Some(n as u32);
            }
            (Scope::Top, "slavesSyncTimeout") => {
                c.slaves_sync_timeout_ms = Some(ranged(
                    node,
                    at,
                    (0, LONG_MS_MAX),
                    "must be from 0 to a year",
                )?);
            }
            (Scope::Cluster, "scanInterval") => {
                c.scan_interval_ms = Some(ranged(
                    node,
                    at,
                    (1, JAVA_INT_MAX),
                    "must be from 1 to 2147483647 ms (Redisson refuses 0 or less)",
                )?);
            }
            (Scope::Server, "timeout") => {
                c.timeout_ms = ranged(
                    node,
                    at,
                    (1, JAVA_INT_MAX),
                    "must be from 1 to 2147483647 ms (at 0 every command would time out at once)",
                )?;
            }
            (Scope::Server, "retryAttempts") => {
                let n = ranged(
                    node,
                    at,
                    (0, JAVA_INT_MAX - 1),
                    "Redisson refuses a negative value or 2147483647",
                )?;
                c.retry_attempts = n as u32;
            }
            (Scope::Server, "retryInterval") => {
                let ms = ranged(node, at, int, "must be from 0 to 2147483647 ms")?;
                if has(self.version, d::SNAKEYAML_SINCE) {
                    return Ok(Use::Ignored);
                }
                c.retry_interval_ms = ms;
                c.retry_pause = RetryPause::Interval { ms };
            }
            (Scope::Server, "retryDelay") => {
                c.retry_pause = retry_delay(node, at, has(self.version, d::SNAKEYAML_SINCE))?;
                let lockcore_has = matches!(
                    c.retry_pause,
                    RetryPause::Constant { .. } | RetryPause::EqualJitter { .. }
                );
                return Ok(if lockcore_has {
                    Use::Modelled
                } else {
                    Use::Unmodelled
                });
            }
            (Scope::Server, "pingConnectionInterval") => {
                c.ping_connection_interval_ms =
                    Some(ranged(node, at, int, "must be from 0 to 2147483647 ms")?);
                return Ok(Use::Unmodelled);
            }
            (Scope::Server, "subscriptionTimeout") => {
                c.subscription_timeout_ms =
                    Some(ranged(node, at, int, "must be from 0 to 2147483647 ms")?);
                return Ok(Use::Unmodelled);
            }
            _ => return Ok(Use::Unmodelled),
        }
        Ok(Use::Modelled)
    }
}

/// Checks a known key's value against its Java type. `null` is taken
/// for unmodelled keys (both readers set the field to its zero).
fn check_kind(node: &Node, kind: Kind, at: At<'_>) -> Result<(), ConfigError> {
    let v = &node.value;
    let ok = match (kind, v) {
        (_, Value::Null) => true,
        (Kind::Int, _) => return integer(node, at).map(|_| ()),
        (Kind::Bool, Value::Bool(_)) => true,
        (Kind::Bool, Value::Str(s)) => s == "true" || s == "false",
        (Kind::Str, Value::Str(_) | Value::Int(_) | Value::Bool(_) | Value::Float(_)) => true,
        (Kind::Enum, Value::Str(_)) => true,
        (Kind::Seq, Value::Seq(_)) => true,
        (Kind::Map, Value::Map(_)) => true,
        (Kind::Object, Value::Tagged(..) | Value::Map(_) | Value::Str(_)) => true,
        _ => false,
    };
    if ok {
        return Ok(());
    }
    let expected = match kind {
        Kind::Int => "a whole number",
        Kind::Bool => "true or false",
        Kind::Str => "a string",
        Kind::Enum => "a name such as SLAVE or MASTER",
        Kind::Seq => "a list",
        Kind::Map => "a mapping",
        Kind::Object => "a class-tagged object such as !<org.redisson.codec.Kryo5Codec> {}",
    };
    Err(at.wrong(expected, v))
}

/// `retryDelay`: a `DelayStrategy` with its class tag, e.g.
/// `!<org.redisson.config.EqualJitterDelay> {baseDelay: PT1S, maxDelay: PT2S}`
/// (YAML) or `{"class": "...", "baseDelay": "PT1S", ...}` (JSON).
/// 4.x's `ConstructDelayStrategy` turns an empty mapping into
/// 100 ms (`ConstantDelay`) or (100 ms, 1 s) (ConfigSupport, redisson-4.7.0).
fn retry_delay(node: &Node, at: At<'_>, snakeyaml: bool) -> Result<RetryPause, ConfigError> {
    const EXPECTED: &str = "a DelayStrategy such as !<org.redisson.config.EqualJitterDelay> {baseDelay: PT1S, maxDelay: PT2S}";
    let Value::Tagged(class, inner) = &node.value else {
        return Err(at.wrong(EXPECTED, &node.value));
    };
    let fields: &[Entry] = match &inner.value {
        Value::Map(entries) => entries,
        Value::Null => &[],
        other => return Err(at.wrong(EXPECTED, other)),
    };
    let short = class.rsplit('.').next().unwrap_or(class);
    let get = |name: &str, empty_default: u64| -> Result<u64, ConfigError> {
        let path = format!("{}.{name}", at.key);
        match fields.iter().find(|e| e.key == name) {
            Some(e) => duration_ms(
                &e.value,
                At {
                    key: &path,
                    line: e.line,
                },
            ),
            None if fields.is_empty() && snakeyaml => Ok(empty_default),
            None => Err(At {
                key: &path,
                line: at.line,
            }
            .wrong("an ISO-8601 duration such as PT1S", &Value::Null)),
        }
    };
    match short {
        "ConstantDelay" => Ok(RetryPause::Constant {
            ms: get("delay", 100)?,
        }),
        "EqualJitterDelay" | "FullJitterDelay" | "DecorrelatedJitterDelay" => {
            let (base_ms, max_ms) = (get("baseDelay", 100)?, get("maxDelay", 1_000)?);
            Ok(match short {
                "EqualJitterDelay" => RetryPause::EqualJitter { base_ms, max_ms },
                "FullJitterDelay" => RetryPause::FullJitter { base_ms, max_ms },
                _ => RetryPause::DecorrelatedJitter { base_ms, max_ms },
            })
        }
        _ => Err(at.wrong(EXPECTED, &node.value)),
    }
}
