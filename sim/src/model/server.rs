//! A Redis node's own settings in a deployment (`[sim.redis]`'s `version`,
//! `appendonly`, `replica_appendonly` and `proxy`), and how they reach
//! fake-redis.
//!
//! They matter to Redisson from 3.46.0, which probes `WAIT 0 0; WAITAOF 0
//! 0 0` and parses the server's unknown-command text, then sends
//! `WAITAOF` after a lock script whenever `INFO` says `aof_enabled:1`
//! (REDISSON-FAMILY.md §6.1-6.2). Every node of a run answers as the same
//! release; the primary's AOF and the replicas' are set apart, since
//! `WAITAOF` counts only replicas that write one.

use fake_redis::{Engine, RedisVersion};

use super::spec::RedisSpec;

impl RedisSpec {
    /// Makes `engine` a node of this deployment: the release it answers
    /// as, its own AOF (the primary's, or `replica`'s), and whether the
    /// replicas it may come to have write one. A replica promoted by a
    /// failover keeps its own AOF setting.
    pub fn configure(&self, engine: &mut Engine, replica: bool) {
        engine.set_version(self.version);
        engine.set_appendonly(if replica {
            self.replica_appendonly
        } else {
            self.appendonly
        });
        engine.set_replicas_appendonly(self.replica_appendonly);
        if self.proxy {
            // What the clients see through the proxy: one node that
            // serves every slot and refuses cross-slot keys.
            engine.serve_every_slot(std::net::SocketAddr::from(([127, 0, 0, 1], 6379)));
        }
    }
}

/// Serde for [`RedisVersion`] as its name (`"6.2"`), refusing any other
/// with the choices.
pub(crate) mod version {
    use fake_redis::RedisVersion;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(v: &RedisVersion, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v.name())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<RedisVersion, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Whether `v` is the default release line (left out when a spec is
/// written, so specs written before the setting existed read the same).
pub(crate) fn is_default_version(v: &RedisVersion) -> bool {
    *v == RedisVersion::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redis(json: &str) -> Result<RedisSpec, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    /// The settings are read from `[sim.redis]` and reach the engine; a
    /// version that is not modelled is refused with the choices; the
    /// default is left out when written, so older specs read the same.
    #[test]
    fn settings_reach_the_engine() {
        let r = redis(r#"{"version": "6.2", "appendonly": true, "replicas": 1}"#).unwrap();
        assert_eq!(r.version, RedisVersion::V6_2);
        let mut e = Engine::new(std::sync::Arc::new(fake_redis::ManualClock::new(0)));
        r.configure(&mut e, false);
        assert_eq!(e.version(), RedisVersion::V6_2);
        let err = redis(r#"{"version": "6.0"}"#).unwrap_err();
        assert!(
            err.contains("unknown Redis version '6.0': expected one of 6.2, 7.0, 7.2"),
            "{err}"
        );
        let written = serde_json::to_string(&redis(r#"{"replicas": 1}"#).unwrap()).unwrap();
        assert_eq!(
            written,
            r#"{"replicas":1,"replication_lag":{"min_ms":1,"max_ms":5}}"#
        );
    }
}
