//! The settings Redisson's `Config` knows, per release.
//!
//! Generated from the `private` fields of `org.redisson.config`'s
//! `Config`, `BaseConfig`, `BaseMasterSlaveServersConfig` and the five
//! server configs at every tag from `redisson-3.1.0` to `redisson-4.7.0`
//! (`git show <tag>:redisson/src/main/java/org/redisson/config/<Class>.java`):
//! a row holds a field from the first tag that declares it (`since`) to
//! the first tag that no longer does (`until`, exclusive). Both readers
//! bind a key to a field of that name: Jackson (3.x) through the
//! bean's setters, SnakeYAML (4.x) through its properties, so the field
//! names are the keys. Fields that hold no setting (`connectionManager`)
//! are left out; the hand-written rows at the end add `String[]` fields
//! and setters that outlived their field. 2.x releases were cut from the
//! same sources as the 3.x of their day, so they read the table at
//! [`Version::lock_code`].

use lockcore::Version;

/// Where a key may stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scope {
    /// The top level (`Config`).
    Top,
    /// Every server block (`BaseConfig`).
    Server,
    /// The blocks with replicas (`BaseMasterSlaveServersConfig`):
    /// sentinel, cluster, replicated, master-slave.
    Replicas,
    /// `singleServerConfig`.
    Single,
    /// `sentinelServersConfig`.
    Sentinel,
    /// `clusterServersConfig`.
    Cluster,
    /// `replicatedServersConfig`.
    Replicated,
    /// `masterSlaveServersConfig`.
    MasterSlave,
}

/// What a key's value must be, from the Java field's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `int` or `long`.
    Int,
    /// `boolean`.
    Bool,
    /// `String`, `URL`, `URI`.
    Str,
    /// An enum (`ReadMode`, `TransportMode`...), written as its name.
    Enum,
    /// `List` or `Set` of addresses.
    Seq,
    /// `Map` (the old `natMap`).
    Map,
    /// An object, usually class-tagged (`codec`, `retryDelay`...).
    Object,
}

/// One field of one class over a range of releases.
#[derive(Debug, Clone, Copy)]
pub(super) struct Field {
    pub scope: Scope,
    pub name: &'static str,
    pub kind: Kind,
    since: Version,
    until: Option<Version>,
}

impl Field {
    fn known_at(&self, at: Version) -> bool {
        at >= self.since && self.until.is_none_or(|u| at < u)
    }
}

const fn v(major: u16, minor: u16, patch: u16) -> Version {
    Version::new(major, minor, patch)
}

const fn f(
    scope: Scope,
    name: &'static str,
    kind: Kind,
    since: Version,
    until: Option<Version>,
) -> Field {
    Field {
        scope,
        name,
        kind,
        since,
        until,
    }
}

/// The version whose config classes `version` ships: 2.x's 3.x twin,
/// and 3.1.0's for anything older (the first tag with these classes).
pub(super) fn config_version(version: Version) -> Version {
    version.lock_code().max(v(3, 1, 0))
}

/// The field `name` in one of `scopes` at `version`, if Redisson knows it.
pub(super) fn lookup(scopes: &[Scope], name: &str, version: Version) -> Option<&'static Field> {
    let at = config_version(version);
    FIELDS
        .iter()
        .find(|f| f.name == name && scopes.contains(&f.scope) && f.known_at(at))
}

use Kind::*;
use Scope::*;

// Wrapping the Some for the generated rows keeps them one per line.
const fn s(version: Version) -> Option<Version> {
    Some(version)
}

#[rustfmt::skip]
static FIELDS: &[Field] = &[
    f(Top, "codec", Object, v(3, 1, 0), None),
    f(Top, "codecProvider", Object, v(3, 1, 0), s(v(3, 5, 7))),
    f(Top, "eventLoopGroup", Object, v(3, 1, 0), None),
    f(Top, "executor", Object, v(3, 1, 0), None),
    f(Top, "nettyThreads", Int, v(3, 1, 0), None),
    f(Top, "redissonReferenceEnabled", Bool, v(3, 1, 0), s(v(3, 5, 7))),
    f(Top, "resolverProvider", Object, v(3, 1, 0), s(v(3, 5, 7))),
    f(Top, "threads", Int, v(3, 1, 0), None),
    f(Top, "useLinuxNativeEpoll", Bool, v(3, 1, 0), s(v(3, 6, 0))),
    f(Top, "lockWatchdogTimeout", Int, v(3, 4, 3), None),
    f(Top, "keepPubSubOrder", Bool, v(3, 4, 4), None),
    f(Top, "referenceCodecProvider", Object, v(3, 5, 7), s(v(3, 10, 1))),
    f(Top, "referenceEnabled", Bool, v(3, 5, 7), None),
    f(Top, "transportMode", Enum, v(3, 6, 0), None),
    f(Top, "addressResolverGroupFactory", Object, v(3, 6, 2), None),
    f(Top, "useScriptCache", Bool, v(3, 9, 0), None),
    f(Top, "decodeInExecutor", Bool, v(3, 10, 2), s(v(3, 15, 0))),
    f(Top, "maxCleanUpDelay", Int, v(3, 10, 4), None),
    f(Top, "minCleanUpDelay", Int, v(3, 10, 4), None),
    f(Top, "cleanUpKeysAmount", Int, v(3, 12, 1), None),
    f(Top, "nettyHook", Object, v(3, 12, 4), None),
    f(Top, "useThreadClassLoader", Bool, v(3, 12, 4), None),
    f(Top, "reliableTopicWatchdogTimeout", Int, v(3, 14, 0), None),
    f(Top, "connectionListener", Object, v(3, 15, 3), None),
    f(Top, "checkLockSyncedSlaves", Bool, v(3, 17, 0), None),
    f(Top, "slavesSyncTimeout", Int, v(3, 22, 0), None),
    f(Top, "lazyInitialization", Bool, v(3, 23, 0), None),
    f(Top, "protocol", Enum, v(3, 25, 0), None),
    f(Top, "nettyExecutor", Object, v(3, 27, 0), None),
    f(Top, "lockWatchdogBatchSize", Int, v(3, 44, 0), None),
    f(Top, "fairLockWaitTimeout", Int, v(3, 46, 0), None),
    f(Top, "valkeyCapabilities", Seq, v(3, 47, 0), None),
    f(Top, "commandMapper", Object, v(4, 0, 0), None),
    f(Top, "credentialsResolver", Object, v(4, 0, 0), None),
    f(Top, "nameMapper", Object, v(4, 0, 0), None),
    f(Top, "password", Str, v(4, 0, 0), None),
    f(Top, "sslKeyManagerFactory", Object, v(4, 0, 0), None),
    f(Top, "sslKeystore", Str, v(4, 0, 0), None),
    f(Top, "sslKeystorePassword", Str, v(4, 0, 0), None),
    f(Top, "sslKeystoreType", Str, v(4, 0, 0), None),
    f(Top, "sslProvider", Enum, v(4, 0, 0), None),
    f(Top, "sslTrustManagerFactory", Object, v(4, 0, 0), None),
    f(Top, "sslTruststore", Str, v(4, 0, 0), None),
    f(Top, "sslTruststorePassword", Str, v(4, 0, 0), None),
    f(Top, "sslVerificationMode", Enum, v(4, 0, 0), None),
    f(Top, "tcpKeepAlive", Bool, v(4, 0, 0), None),
    f(Top, "tcpKeepAliveCount", Int, v(4, 0, 0), None),
    f(Top, "tcpKeepAliveIdle", Int, v(4, 0, 0), None),
    f(Top, "tcpKeepAliveInterval", Int, v(4, 0, 0), None),
    f(Top, "tcpNoDelay", Bool, v(4, 0, 0), None),
    f(Top, "tcpUserTimeout", Int, v(4, 0, 0), None),
    f(Top, "username", Str, v(4, 0, 0), None),
    f(Server, "clientName", Str, v(3, 1, 0), None),
    f(Server, "connectTimeout", Int, v(3, 1, 0), None),
    f(Server, "failedAttempts", Int, v(3, 1, 0), s(v(3, 6, 3))),
    f(Server, "idleConnectionTimeout", Int, v(3, 1, 0), None),
    f(Server, "password", Str, v(3, 1, 0), None),
    f(Server, "pingTimeout", Int, v(3, 1, 0), s(v(3, 12, 4))),
    f(Server, "reconnectionTimeout", Int, v(3, 1, 0), s(v(3, 6, 3))),
    f(Server, "retryAttempts", Int, v(3, 1, 0), None),
    f(Server, "retryInterval", Int, v(3, 1, 0), None),
    f(Server, "subscriptionsPerConnection", Int, v(3, 1, 0), None),
    f(Server, "timeout", Int, v(3, 1, 0), None),
    f(Server, "sslEnableEndpointIdentification", Bool, v(3, 4, 3), s(v(3, 41, 0))),
    f(Server, "sslKeystore", Str, v(3, 4, 3), None),
    f(Server, "sslKeystorePassword", Str, v(3, 4, 3), None),
    f(Server, "sslProvider", Enum, v(3, 4, 3), None),
    f(Server, "sslTruststore", Str, v(3, 4, 3), None),
    f(Server, "sslTruststorePassword", Str, v(3, 4, 3), None),
    f(Server, "keepAlive", Bool, v(3, 5, 5), None),
    f(Server, "pingConnection", Bool, v(3, 5, 5), s(v(3, 5, 6))),
    f(Server, "tcpNoDelay", Bool, v(3, 5, 5), None),
    f(Server, "pingConnectionInterval", Int, v(3, 5, 6), None),
    f(Server, "username", Str, v(3, 12, 4), None),
    f(Server, "nameMapper", Object, v(3, 15, 4), None),
    f(Server, "credentialsResolver", Object, v(3, 19, 0), None),
    f(Server, "commandMapper", Object, v(3, 22, 0), None),
    f(Server, "sslKeyManagerFactory", Object, v(3, 22, 0), None),
    f(Server, "sslTrustManagerFactory", Object, v(3, 22, 0), None),
    f(Server, "subscriptionTimeout", Int, v(3, 24, 0), None),
    f(Server, "tcpKeepAliveCount", Int, v(3, 24, 0), None),
    f(Server, "tcpKeepAliveIdle", Int, v(3, 24, 0), None),
    f(Server, "tcpKeepAliveInterval", Int, v(3, 24, 0), None),
    f(Server, "tcpUserTimeout", Int, v(3, 24, 0), None),
    f(Server, "sslKeystoreType", Str, v(3, 30, 0), None),
    f(Server, "sslVerificationMode", Enum, v(3, 41, 0), None),
    f(Server, "credentialsReapplyInterval", Int, v(3, 46, 0), s(v(3, 52, 0))),
    f(Server, "reconnectionDelay", Object, v(3, 48, 0), None),
    f(Server, "retryDelay", Object, v(3, 48, 0), None),
    f(Replicas, "loadBalancer", Object, v(3, 1, 0), None),
    f(Replicas, "masterConnectionMinimumIdleSize", Int, v(3, 1, 0), None),
    f(Replicas, "masterConnectionPoolSize", Int, v(3, 1, 0), None),
    f(Replicas, "readMode", Enum, v(3, 1, 0), None),
    f(Replicas, "slaveConnectionMinimumIdleSize", Int, v(3, 1, 0), None),
    f(Replicas, "slaveConnectionPoolSize", Int, v(3, 1, 0), None),
    f(Replicas, "slaveSubscriptionConnectionMinimumIdleSize", Int, v(3, 1, 0), s(v(3, 3, 1))),
    f(Replicas, "slaveSubscriptionConnectionPoolSize", Int, v(3, 1, 0), s(v(3, 3, 1))),
    f(Replicas, "subscriptionConnectionMinimumIdleSize", Int, v(3, 3, 1), None),
    f(Replicas, "subscriptionConnectionPoolSize", Int, v(3, 3, 1), None),
    f(Replicas, "subscriptionMode", Enum, v(3, 3, 1), None),
    f(Replicas, "dnsMonitoringInterval", Int, v(3, 5, 1), None),
    f(Replicas, "failedSlaveCheckInterval", Int, v(3, 6, 3), None),
    f(Replicas, "failedSlaveReconnectionInterval", Int, v(3, 6, 3), None),
    f(Replicas, "failedSlaveNodeDetector", Object, v(3, 23, 5), None),
    f(Replicas, "dnsMonitoringTimes", Int, v(4, 4, 0), None),
    f(Replicas, "fallbackLoadingToMaster", Bool, v(4, 4, 0), None),
    f(Single, "address", Seq, v(3, 1, 0), s(v(3, 2, 1))),
    f(Single, "connectionMinimumIdleSize", Int, v(3, 1, 0), None),
    f(Single, "connectionPoolSize", Int, v(3, 1, 0), None),
    f(Single, "database", Int, v(3, 1, 0), None),
    f(Single, "dnsMonitoring", Bool, v(3, 1, 0), s(v(3, 7, 0))),
    f(Single, "dnsMonitoringInterval", Int, v(3, 1, 0), None),
    f(Single, "subscriptionConnectionMinimumIdleSize", Int, v(3, 1, 0), None),
    f(Single, "subscriptionConnectionPoolSize", Int, v(3, 1, 0), None),
    f(Single, "address", Str, v(3, 2, 1), None),
    f(Single, "dnsMonitoringTimes", Int, v(4, 4, 0), None),
    f(Sentinel, "database", Int, v(3, 1, 0), None),
    f(Sentinel, "masterName", Str, v(3, 1, 0), None),
    f(Sentinel, "sentinelAddresses", Seq, v(3, 1, 0), None),
    f(Sentinel, "scanInterval", Int, v(3, 6, 1), None),
    f(Sentinel, "natMap", Map, v(3, 11, 1), s(v(3, 12, 1))),
    f(Sentinel, "checkSentinelsList", Bool, v(3, 12, 1), None),
    f(Sentinel, "natMapper", Object, v(3, 12, 1), None),
    f(Sentinel, "sentinelPassword", Str, v(3, 15, 0), None),
    f(Sentinel, "checkSlaveStatusWithSyncing", Bool, v(3, 15, 2), None),
    f(Sentinel, "sentinelsDiscovery", Bool, v(3, 16, 4), None),
    f(Sentinel, "sentinelUsername", Str, v(3, 16, 5), None),
    f(Cluster, "nodeAddresses", Seq, v(3, 1, 0), None),
    f(Cluster, "scanInterval", Int, v(3, 1, 0), None),
    f(Cluster, "natMap", Map, v(3, 10, 6), s(v(3, 12, 1))),
    f(Cluster, "checkSlotsCoverage", Bool, v(3, 11, 6), None),
    f(Cluster, "natMapper", Object, v(3, 12, 1), None),
    f(Cluster, "shardedSubscriptionMode", Enum, v(3, 29, 0), None),
    f(Cluster, "checkMasterLinkStatus", Bool, v(3, 51, 0), None),
    f(Cluster, "database", Int, v(4, 0, 0), None),
    f(Replicated, "database", Int, v(3, 2, 4), None),
    f(Replicated, "nodeAddresses", Seq, v(3, 2, 4), None),
    f(Replicated, "scanInterval", Int, v(3, 2, 4), None),
    f(Replicated, "monitorIPChanges", Bool, v(3, 20, 0), None),
    f(Replicated, "natMapper", Object, v(4, 4, 0), None),
    f(MasterSlave, "database", Int, v(3, 1, 0), None),
    f(MasterSlave, "masterAddress", Seq, v(3, 1, 0), s(v(3, 2, 1))),
    f(MasterSlave, "slaveAddresses", Seq, v(3, 1, 0), None),
    f(MasterSlave, "masterAddress", Str, v(3, 2, 1), None),
    // Not in the generated rows: `String[]` fields (the field pattern
    // took no arrays) and setters that outlived their field (deprecated
    // `setNatMap`, `setSslEnableEndpointIdentification`), which both
    // readers still bind; checked with `git show <tag>:…` at the tags.
    f(Server, "sslProtocols", Seq, v(3, 15, 4), None),
    f(Server, "sslCiphers", Seq, v(3, 22, 0), None),
    f(Top, "sslProtocols", Seq, v(4, 0, 0), None),
    f(Top, "sslCiphers", Seq, v(4, 0, 0), None),
    f(Server, "sslEnableEndpointIdentification", Bool, v(3, 41, 0), None),
    f(Sentinel, "natMap", Map, v(3, 12, 1), None),
    f(Cluster, "natMap", Map, v(3, 12, 1), None),
];
