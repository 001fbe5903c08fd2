//! The three realistic configs, the readers' quirks per release,
//! and every bad input with its message.

use lockcore::{Config, Millis, Release, RetryDelay, Version};

use super::*;

const SINGLE_3_23_4: &str = include_str!("../../../../docs/src/audit.in/single-3.23.4.yaml");
const SENTINEL_3_45_0: &str = include_str!("../../../../docs/src/audit.in/sentinel-3.45.0.yaml");
const CLUSTER_4_7_0: &str = include_str!("../../../../docs/src/audit.in/cluster-4.7.0.yaml");
const SINGLE_JSON: &str = include_str!("../../../../docs/src/audit.in/single-3.23.4.json");

fn yaml(text: &str, version: &str) -> Result<RedissonConfig, ConfigError> {
    RedissonConfig::read_for(text, Format::Yaml, version)
}

fn error(text: &str, version: &str) -> String {
    yaml(text, version).unwrap_err().to_string()
}

fn paths(keys: &[KeyAt]) -> Vec<(&str, usize)> {
    keys.iter().map(|k| (k.path.as_str(), k.line)).collect()
}

fn built(config: &RedissonConfig) -> Config {
    config.apply(&mut Config::builder()).build().unwrap()
}

/// (a) A single server on 3.23.4 with its defaults: every modelled value
/// is Redisson 3.23.4's, there is no `subscriptionTimeout` yet, and
/// lockcore built from it is lockcore's own default for that release.
#[test]
fn a_single_server_on_3_23_4_reads_as_redisson_s_defaults() {
    let c = yaml(SINGLE_3_23_4, "3.23.4").unwrap();
    assert_eq!(c.mode, Mode::Single);
    assert_eq!(c.lock_watchdog_timeout_ms, 30_000);
    assert_eq!(c.lock_watchdog_batch_size, None);
    assert_eq!(
        (c.timeout_ms, c.retry_attempts, c.retry_interval_ms),
        (3_000, 3, 1_500)
    );
    assert_eq!(c.retry_pause, RetryPause::Interval { ms: 1_500 });
    assert_eq!(c.ping_connection_interval_ms, Some(30_000));
    assert_eq!(c.subscription_timeout_ms, None);
    assert_eq!(c.slaves_sync_timeout_ms, Some(1_000));
    assert!(c.unknown.is_empty() && c.ignored.is_empty());
    assert!(c.unknown_keys_fatal_in_redisson);
    assert_eq!(c.settings.len(), 10);
    assert!(c.settings.iter().all(|s| !s.modelled));
    assert_eq!(c.unmodelled[0].path, "singleServerConfig.address");
    assert_eq!(c.unmodelled.last().unwrap().path, "transportMode");
    let codec = c.settings.iter().find(|s| s.path == "codec").unwrap();
    assert_eq!(
        codec.value,
        serde_json::json!({"class": "org.redisson.codec.Kryo5Codec"})
    );
    assert_eq!(codec.line, 12);
    let expected = Config::builder()
        .release(Release::version(Version::new(3, 23, 4)))
        .build()
        .unwrap();
    assert_eq!(built(&c), expected);
}

/// (b) Sentinel on 3.45.0 with a 5 s watchdog: the file's values win,
/// the batch size is 3.44's default, the password never reaches output.
#[test]
fn sentinel_on_3_45_0_with_a_short_watchdog() {
    let c = yaml(SENTINEL_3_45_0, "3.45.0").unwrap();
    assert_eq!(c.mode, Mode::Sentinel);
    assert_eq!(c.lock_watchdog_timeout_ms, 5_000);
    assert_eq!(c.lock_watchdog_batch_size, Some(100));
    assert_eq!((c.timeout_ms, c.retry_attempts), (2_000, 3));
    assert_eq!(c.retry_pause, RetryPause::Interval { ms: 1_000 });
    assert_eq!(c.ping_connection_interval_ms, Some(10_000));
    assert_eq!(c.subscription_timeout_ms, Some(7_500));
    assert_eq!(c.slaves_sync_timeout_ms, Some(1_000));
    assert!(c.unknown.is_empty());
    let at = |p: &str| c.settings.iter().find(|s| s.path == p).unwrap();
    assert_eq!(
        (
            at("lockWatchdogTimeout").line,
            at("lockWatchdogTimeout").modelled
        ),
        (28, true)
    );
    assert_eq!(at("sentinelServersConfig.password").value, "***");
    assert!(!serde_json::to_string(&c).unwrap().contains("s3cr3t"));
    assert!(at("sentinelServersConfig.timeout").modelled);
    assert!(!at("sentinelServersConfig.pingConnectionInterval").modelled);
    let config = built(&c);
    assert_eq!(config.watchdog_timeout, Millis(5_000));
    assert_eq!(config.response_timeout, Millis(2_000));
    assert_eq!(
        (config.retry_attempts, config.retry_interval),
        (3, Millis(1_000))
    );
    assert_eq!(config.retry_delay, RetryDelay::Constant);
    assert_eq!(config.release, Release::version(Version::new(3, 45, 0)));
}

/// (c) 4.7.0 with defaults: 4 attempts and `EqualJitterDelay(1 s, 2 s)`,
/// which is what lockcore gives 4.7.0 on its own, and a 5 s `scanInterval`.
#[test]
fn a_cluster_on_4_7_0_reads_as_redisson_s_defaults() {
    let c = yaml(CLUSTER_4_7_0, "4.7.0").unwrap();
    assert_eq!(c.mode, Mode::Cluster);
    assert_eq!(
        (c.lock_watchdog_timeout_ms, c.lock_watchdog_batch_size),
        (30_000, Some(100))
    );
    assert_eq!((c.timeout_ms, c.retry_attempts), (3_000, 4));
    assert_eq!(
        c.retry_pause,
        RetryPause::EqualJitter {
            base_ms: 1_000,
            max_ms: 2_000
        }
    );
    assert!(!c.unknown_keys_fatal_in_redisson);
    // Its one setting away from the defaults lockcore models.
    assert_eq!(c.scan_interval_ms, Some(5_000));
    let expected = Config::builder()
        .release(Release::version(Version::new(4, 7, 0)))
        .scan_interval(5_000)
        .build()
        .unwrap();
    assert_eq!(built(&c), expected);
}

/// JSON (3.x's `Config.fromJSON`): keys get their lines, `"class"` is
/// the class tag.
#[test]
fn json_reads_like_yaml_with_lines() {
    let c = RedissonConfig::read(SINGLE_JSON, Format::Json, Version::new(3, 23, 4)).unwrap();
    assert_eq!((c.timeout_ms, c.retry_attempts), (5_000, 5));
    assert_eq!(c.retry_pause, RetryPause::Interval { ms: 500 });
    assert_eq!(c.lock_watchdog_timeout_ms, 60_000);
    let lines: Vec<_> = c
        .settings
        .iter()
        .map(|s| (s.path.as_str(), s.line))
        .collect();
    assert_eq!(lines[0], ("singleServerConfig.address", 3));
    assert_eq!(lines[4], ("lockWatchdogTimeout", 8));
    assert_eq!(
        Format::of_path(std::path::Path::new("a/redisson.JSON")),
        Format::Json
    );
}

/// Keys Redisson does not know at that release are reported with their
/// lines, and a key is known only in its releases.
#[test]
fn unknown_keys_are_reported_per_release() {
    let text = "lockWatchdogBatchSize: 50\nsingleServerConfig:\n  address: redis://h:6379\n  dnsMonitoring: true\n  tiemout: 100\n";
    let old = yaml(text, "3.6.0").unwrap();
    assert_eq!(
        paths(&old.unknown),
        [
            ("lockWatchdogBatchSize", 1),
            ("singleServerConfig.tiemout", 5)
        ]
    );
    assert_eq!(old.lock_watchdog_batch_size, None);
    let new = yaml(text, "3.44.0").unwrap();
    assert_eq!(
        paths(&new.unknown),
        [
            ("singleServerConfig.dnsMonitoring", 4),
            ("singleServerConfig.tiemout", 5)
        ]
    );
    assert_eq!(new.lock_watchdog_batch_size, Some(50));
    // A setter that outlived its field is still a key.
    let nat = "sentinelServersConfig:\n  masterName: m\n  natMap: {\"10.0.0.1:6379\": \"1.2.3.4:6379\"}\n";
    assert!(yaml(nat, "4.7.0").unwrap().unknown.is_empty());
    // 2.11.0 ships 3.6.0's classes.
    assert_eq!(yaml(text, "2.11.0").unwrap().unknown, old.unknown);
}

/// How the pause before a resend is read: `retryInterval` to 3.47; from
/// 3.48 the last of `retryInterval` and `retryDelay` wins (Jackson calls
/// the setters in file order); 4.x's reader skips `retryInterval`.
#[test]
fn the_retry_pause_follows_each_release_s_reader() {
    let both = "singleServerConfig:\n  address: redis://h:6379\n  retryDelay: !<org.redisson.config.EqualJitterDelay> {baseDelay: PT0.5S, maxDelay: PT4S}\n  retryInterval: 700\n";
    assert_eq!(yaml(both, "3.47.0").unwrap().unknown.len(), 1);
    assert_eq!(
        yaml(both, "3.47.0").unwrap().retry_pause,
        RetryPause::Interval { ms: 700 }
    );
    assert_eq!(
        yaml(both, "3.48.0").unwrap().retry_pause,
        RetryPause::Interval { ms: 700 }
    );
    let v4 = yaml(both, "4.0.0").unwrap();
    assert_eq!(
        v4.retry_pause,
        RetryPause::EqualJitter {
            base_ms: 500,
            max_ms: 4_000
        }
    );
    assert_eq!(
        paths(&v4.ignored),
        [("singleServerConfig.retryInterval", 4)]
    );
    assert_eq!(v4.retry_interval_ms, 1_500);
    assert_eq!(
        built(&v4).retry_delay,
        RetryDelay::EqualJitter {
            base: Millis(500),
            max: Millis(4_000)
        }
    );
    let constant = "singleServerConfig:\n  address: redis://h:6379\n  retryDelay: !<org.redisson.config.ConstantDelay> {delay: PT0.25S}\n";
    let c = yaml(constant, "4.7.0").unwrap();
    assert_eq!(c.retry_pause, RetryPause::Constant { ms: 250 });
    let quoted = "singleServerConfig:\n  address: redis://h:6379\n  timeout: \"2500\"\n";
    assert_eq!(yaml(quoted, "4.7.0").unwrap().timeout_ms, 2_500);
    assert_eq!(
        (built(&c).retry_interval, built(&c).retry_delay),
        (Millis(250), RetryDelay::Constant)
    );
    // 4.x's ConstructDelayStrategy: an empty mapping is (100 ms, 1 s).
    let empty = "singleServerConfig:\n  address: redis://h:6379\n  retryDelay: !<org.redisson.config.EqualJitterDelay> {}\n";
    assert_eq!(
        yaml(empty, "4.7.0").unwrap().retry_pause,
        RetryPause::EqualJitter {
            base_ms: 100,
            max_ms: 1_000
        }
    );
    let full = "singleServerConfig:\n  address: redis://h:6379\n  retryDelay: !<org.redisson.config.FullJitterDelay> {baseDelay: PT1S, maxDelay: PT2S}\n";
    let f = yaml(full, "4.7.0").unwrap();
    assert_eq!(
        paths(&f.unmodelled),
        [
            ("singleServerConfig.address", 2),
            ("singleServerConfig.retryDelay", 3)
        ]
    );
}

/// Every bad input: the message names the key and its line.
#[test]
fn bad_files_say_which_key_on_which_line() {
    let single = |body: &str| format!("singleServerConfig:\n  address: redis://h:6379\n{body}");
    let cases: Vec<(String, &str, &str)> = vec![
        (
            single("  timeout: \"abc\"\n"),
            "3.23.4",
            "line 3: `singleServerConfig.timeout` must be a whole number, found the string \"abc\"",
        ),
        (
            single("  timeout: 0\n"),
            "3.23.4",
            "line 3: `singleServerConfig.timeout` is 0: must be from 1 to 2147483647 ms (at 0 every command would time out at once)",
        ),
        (
            single("  timeout: -5\n"),
            "3.23.4",
            "line 3: `singleServerConfig.timeout` is -5: must be from 1 to 2147483647 ms (at 0 every command would time out at once)",
        ),
        (
            single("  retryAttempts: 2147483647\n"),
            "3.23.4",
            "line 3: `singleServerConfig.retryAttempts` is 2147483647: Redisson refuses a negative value or 2147483647",
        ),
        (
            single("  keepAlive: 3\n"),
            "3.23.4",
            "line 3: `singleServerConfig.keepAlive` must be true or false, found the number 3",
        ),
        (
            single("  retryDelay: PT1S\n"),
            "4.7.0",
            "line 3: `singleServerConfig.retryDelay` must be a DelayStrategy such as !<org.redisson.config.EqualJitterDelay> {baseDelay: PT1S, maxDelay: PT2S}, found the string \"PT1S\"",
        ),
        (
            single(
                "  retryDelay: !<org.redisson.config.EqualJitterDelay>\n    baseDelay: 1000\n    maxDelay: PT2S\n",
            ),
            "4.7.0",
            "line 4: `singleServerConfig.retryDelay.baseDelay` must be an ISO-8601 duration such as PT1S or PT0.5S, found the number 1000",
        ),
        (
            format!("lockWatchdogTimeout: 1\n{}", single("")),
            "3.23.4",
            "line 1: `lockWatchdogTimeout` is 1: must be from 3 ms (a third of it is the renewal period) to a year",
        ),
        (
            format!("lockWatchdogTimeout: 99999999999999\n{}", single("")),
            "3.23.4",
            "line 1: `lockWatchdogTimeout` is 99999999999999: must be from 3 ms (a third of it is the renewal period) to a year",
        ),
        (
            format!("lockWatchdogBatchSize: 0\n{}", single("")),
            "3.44.0",
            "line 1: `lockWatchdogBatchSize` is 0: must be from 1 to 2147483647",
        ),
        (
            "clusterServerConfig:\n  nodeAddresses: []\n".to_owned(),
            "3.23.4",
            "line 1: unknown mode `clusterServerConfig` for Redisson 3.23.4 (expected one of: singleServerConfig, replicatedServersConfig, sentinelServersConfig, clusterServersConfig, masterSlaveServersConfig)",
        ),
        (
            "elasticacheServersConfig:\n  nodeAddresses: []\n".to_owned(),
            "3.23.4",
            "line 1: unknown mode `elasticacheServersConfig` for Redisson 3.23.4 (expected one of: singleServerConfig, replicatedServersConfig, sentinelServersConfig, clusterServersConfig, masterSlaveServersConfig)",
        ),
        (
            format!("{}sentinelServersConfig:\n  masterName: m\n", single("")),
            "3.23.4",
            "line 3: `sentinelServersConfig` and `singleServerConfig` (line 1) both configure the servers; Redisson's Config takes exactly one mode",
        ),
        (
            "threads: 16\n".to_owned(),
            "3.23.4",
            "no server mode: the file needs one of singleServerConfig, replicatedServersConfig, sentinelServersConfig, clusterServersConfig, masterSlaveServersConfig (Redisson refuses it with \"server(s) address(es) not defined!\")",
        ),
        (
            "singleServerConfig: redis://h:6379\n".to_owned(),
            "3.23.4",
            "line 1: `singleServerConfig` must be a mapping of server settings, found the string \"redis://h:6379\"",
        ),
        (
            "- a\n- b\n".to_owned(),
            "3.23.4",
            "line 1: a Redisson config is a mapping of settings, found a list",
        ),
        (
            single("  timeout: [1\n"),
            "3.23.4",
            "line 4, column 1: malformed YAML: while parsing a flow sequence, expected ',' or ']'",
        ),
        (
            single(""),
            "4.8.0",
            "Redisson 4.8.0 is out of range: locksim models 2.0.0 to 2.15.2 and 3.0.0 to 4.7.0",
        ),
        (
            single(""),
            "3.x",
            "'3.x' is not a version number (expected major.minor.patch, e.g. 3.23.4)",
        ),
    ];
    for (text, version, message) in cases {
        assert_eq!(error(&text, version), message, "{text}");
    }
    let json = RedissonConfig::read(
        "{\n  \"threads\": 16,\n}",
        Format::Json,
        Version::new(3, 23, 4),
    );
    assert_eq!(
        json.unwrap_err().to_string(),
        "line 3, column 1: malformed JSON: trailing comma"
    );
    let json = "{\n  \"singleServerConfig\": {\n    \"address\": \"redis://h:6379\",\n    \"timeout\": \"abc\"\n  }\n}";
    let err = RedissonConfig::read(json, Format::Json, Version::new(3, 23, 4)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 4: `singleServerConfig.timeout` must be a whole number, found the string \"abc\""
    );
}

/// Any text gives a config or an error, never a panic: every prefix of
/// the examples (cut mid-key, mid-tag, mid-string), deep nesting, and
/// a repeated key.
#[test]
fn no_input_panics() {
    for text in [SINGLE_3_23_4, SENTINEL_3_45_0, CLUSTER_4_7_0, SINGLE_JSON] {
        for cut in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
            for format in [Format::Yaml, Format::Json] {
                let _ = RedissonConfig::read(&text[..cut], format, Version::new(3, 45, 0));
            }
        }
    }
    let deep = format!(
        "singleServerConfig:\n  codec: {}{}\n",
        "[".repeat(200_000),
        "]".repeat(200_000)
    );
    assert!(yaml(&deep, "3.23.4").is_err());
    let deep = format!(
        "singleServerConfig:\n  codec:\n    {}x\n",
        "- ".repeat(200_000)
    );
    assert_eq!(
        error(&deep, "3.23.4"),
        "line 3: nested more than 64 levels deep; a Redisson config needs a handful"
    );
    let twice = "singleServerConfig:\n  address: redis://h:6379\n  timeout: 100\n  timeout: 200\n";
    // Both of Redisson's readers let the last one win; saphyr refuses
    // the file, which names the line of what is most likely a slip.
    assert_eq!(
        error(twice, "3.23.4"),
        "line 4, column 3: malformed YAML: duplicated key in mapping"
    );
}

/// Each mode binds its own class's keys: `masterName` is a Sentinel
/// setting, `slaveAddresses` a master-slave one; replicated came in 3.2.4.
#[test]
fn each_mode_reads_its_own_keys() {
    let ms = "masterSlaveServersConfig:\n  masterAddress: redis://m:6379\n  slaveAddresses: [redis://s:6379]\n  masterName: x\n";
    let c = yaml(ms, "3.23.4").unwrap();
    assert_eq!(c.mode, Mode::MasterSlave);
    assert_eq!(
        paths(&c.unknown),
        [("masterSlaveServersConfig.masterName", 4)]
    );
    let replicated = "replicatedServersConfig:\n  nodeAddresses: [redis://a:6379]\n";
    assert_eq!(yaml(replicated, "3.2.4").unwrap().mode, Mode::Replicated);
    assert_eq!(
        error(replicated, "3.2.3"),
        "line 1: unknown mode `replicatedServersConfig` for Redisson 3.2.3 (expected one of: singleServerConfig, sentinelServersConfig, clusterServersConfig, masterSlaveServersConfig)"
    );
}

/// A cluster's `scanInterval` is modelled: lockcore's topology scan
/// runs at it. Redisson refuses 0 or less (`ClusterConnectionManager`),
/// and so does the audit, by line; a Sentinel's is its sentinel poll,
/// which is not modelled.
#[test]
fn a_clusters_scan_interval_reaches_lockcore() {
    let file = "clusterServersConfig:\n  nodeAddresses: [\"redis://127.0.0.1:7000\"]\n  scanInterval: 2500\n";
    let c = yaml(file, "4.7.0").unwrap();
    assert_eq!(c.scan_interval_ms, Some(2_500));
    assert_eq!(built(&c).scan_interval, lockcore::Millis(2_500));
    let at = c
        .settings
        .iter()
        .find(|s| s.path == "clusterServersConfig.scanInterval");
    assert!(at.unwrap().modelled);
    let zero = file.replace("2500", "0");
    let e = yaml(&zero, "4.7.0").unwrap_err().to_string();
    assert!(e.contains("line 3") && e.contains("scanInterval"), "{e}");
    let sentinel = "sentinelServersConfig:\n  sentinelAddresses: [\"redis://127.0.0.1:26379\"]\n  masterName: m\n  scanInterval: 2500\n";
    let c = yaml(sentinel, "4.7.0").unwrap();
    assert_eq!(c.scan_interval_ms, None);
    assert!(
        c.unmodelled
            .iter()
            .any(|k| k.path == "sentinelServersConfig.scanInterval")
    );
}
