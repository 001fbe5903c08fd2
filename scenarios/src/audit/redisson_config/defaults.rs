//! Redisson's defaults for the settings locksim models, per release.
//!
//! Each value is the field's initialiser in `org.redisson.config` at the
//! tags cited (the `git show <tag>:…/<Class>.java` of the field table in
//! `fields.rs`):
//!
//! | setting | default | releases | source |
//! | --- | --- | --- | --- |
//! | `lockWatchdogTimeout` | 30 000 ms | all (a setting from 3.4.3; fixed before) | `Config`, redisson-3.4.3 … 4.7.0 |
//! | `lockWatchdogBatchSize` | 100 | 3.44.0+ | `Config`, redisson-3.44.0 |
//! | `timeout` | 3 000 ms | all | `BaseConfig`, redisson-3.1.0 … 4.7.0 |
//! | `retryAttempts` | 3 → 4 | 4 from 3.48.0 | `BaseConfig`, redisson-3.48.0 (commit e1154e3ec, #5325) |
//! | `retryInterval` | 1 500 ms | all; ignored by 4.x's YAML reader | `BaseConfig`; `ConfigSupport.CustomPropertyUtils.ignoredProperties`, redisson-4.0.0 |
//! | `retryDelay` | `EqualJitterDelay(1 s, 2 s)` | 3.48.0+ | `BaseConfig`, redisson-3.48.0 |
//! | `slavesSyncTimeout` | 1 000 ms | 3.22.0+ | `Config`, redisson-3.22.0 |
//! | `subscriptionTimeout` | 7 500 ms | 3.24.0+ | `BaseConfig`, redisson-3.24.0 |
//! | `pingConnectionInterval` | 0 → 30 000 ms | 3.5.6+; 30 000 from 3.13.6 | `BaseConfig`, redisson-3.5.6, redisson-3.13.6 |

use lockcore::Version;

use super::fields::config_version;

const fn v(major: u16, minor: u16, patch: u16) -> Version {
    Version::new(major, minor, patch)
}

/// `lockWatchdogTimeout`.
pub(super) const LOCK_WATCHDOG_TIMEOUT_MS: u64 = 30_000;
/// `lockWatchdogBatchSize`.
pub(super) const LOCK_WATCHDOG_BATCH_SIZE: u32 = 100;
/// `timeout`.
pub(super) const TIMEOUT_MS: u64 = 3_000;
/// `retryInterval`.
pub(super) const RETRY_INTERVAL_MS: u64 = 1_500;
/// `retryDelay`'s `EqualJitterDelay(baseDelay, maxDelay)`.
pub(super) const RETRY_DELAY_MS: (u64, u64) = (1_000, 2_000);
/// `slavesSyncTimeout`.
pub(super) const SLAVES_SYNC_TIMEOUT_MS: u64 = 1_000;
/// `subscriptionTimeout`.
pub(super) const SUBSCRIPTION_TIMEOUT_MS: u64 = 7_500;

/// The first release with `lockWatchdogBatchSize`.
pub(super) const BATCH_SIZE_SINCE: Version = v(3, 44, 0);
/// The first release with `retryDelay` and 4 retry attempts.
pub(super) const RETRY_DELAY_SINCE: Version = v(3, 48, 0);
/// The first release with `slavesSyncTimeout`.
pub(super) const SLAVES_SYNC_SINCE: Version = v(3, 22, 0);
/// The first release with `subscriptionTimeout`.
pub(super) const SUBSCRIPTION_TIMEOUT_SINCE: Version = v(3, 24, 0);
/// The first release reading YAML with SnakeYAML, which skips unknown
/// keys and `retryInterval`; Jackson (3.x) refuses unknown keys.
pub(super) const SNAKEYAML_SINCE: Version = v(4, 0, 0);

/// Whether `version`'s config classes are at least `since`.
pub(super) fn has(version: Version, since: Version) -> bool {
    config_version(version) >= since
}

/// `retryAttempts` at `version`.
pub(super) fn retry_attempts(version: Version) -> u32 {
    if has(version, RETRY_DELAY_SINCE) {
        4
    } else {
        3
    }
}

/// `pingConnectionInterval` at `version`, if it is a setting there.
pub(super) fn ping_connection_interval_ms(version: Version) -> Option<u64> {
    let at = config_version(version);
    if at < v(3, 5, 6) {
        None
    } else if at < v(3, 13, 6) {
        Some(0)
    } else {
        Some(30_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_tags() {
        assert_eq!(retry_attempts(v(3, 47, 0)), 3);
        assert_eq!(retry_attempts(v(3, 48, 0)), 4);
        assert_eq!(retry_attempts(v(4, 7, 0)), 4);
        // 2.15.2 ships 3.10.2's config classes.
        assert_eq!(ping_connection_interval_ms(v(2, 15, 2)), Some(0));
        assert_eq!(ping_connection_interval_ms(v(3, 23, 4)), Some(30_000));
        assert_eq!(ping_connection_interval_ms(v(3, 5, 5)), None);
    }
}
