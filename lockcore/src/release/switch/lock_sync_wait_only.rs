//! `lock-sync-wait-only` (Redisson 4.0.0, commit 64bacfef3).
//!
//! 3.46.0 to 3.52.x followed lock scripts with `WAITAOF 1 <replicas>
//! <timeout>` whenever the primary's `INFO` said `aof_enabled:1`,
//! although the lock asks for `SyncMode.WAIT`: each lock operation waited
//! for fsyncs (#6702, #6931), and with replicas that write no AOF none was
//! counted synced, so every operation failed "None of slaves were synced"
//! after running (#6920). 4.0.0 uses AOF only for the sync modes WAIT_AOF
//! and AUTO: lock scripts get `WAIT`. See `machine/probe.rs`.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "lock-sync-wait-only",
    since: Some(Version::new(4, 0, 0)),
    upstream: "commit 64bacfef3",
    summary: "lock scripts are followed by WAIT even when the primary writes an AOF, not WAITAOF 1",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use super::super::wait_probe::tests::{answer_probe, client, next_sync};
    use crate::Value;

    /// Redis 7.2 with AOF on: 3.52.0 sends `WAITAOF 1 1 1000`, 4.0.0
    /// `WAIT 1 1000`.
    #[test]
    fn from_4_0_0_lock_scripts_wait_for_replicas_only() {
        for (version, words) in [
            ("3.52.0", vec!["WAITAOF", "1", "1", "1000"]),
            ("4.0.0", vec!["WAIT", "1", "1000"]),
        ] {
            let mut h = client(version, true);
            answer_probe(&mut h, Value::Array(vec![Value::Int(1), Value::Int(0)]));
            let (_, sync) = next_sync(&mut h);
            assert_eq!(sync.map(|s| s.1), Some(words.iter().map(|w| w.to_string()).collect()), "{version}");
        }
    }
}
