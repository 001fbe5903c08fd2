//! `connection-closed-removed` (Redisson 3.10.0 and 2.15.0, #1695 and
//! #1748, commit 1a08db75b).
//!
//! `RedisConnectionClosedException` is removed: a command whose
//! connection closed fails as any other error, and a multi-lock no longer
//! unlocks a constituent whose acquire failed that way (3.8.2 to 3.9.x
//! did, with `multi-timeout-unlocks`). Not a fix: the acquire may have
//! run before the connection closed.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "connection-closed-removed",
    since: Some(Version::new(3, 10, 0)),
    upstream: "#1695, #1748 (commit 1a08db75b)",
    summary: "RedisConnectionClosedException is removed: a multi-lock no longer unlocks a constituent whose acquire failed on a closed connection",
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::machine::multi_harness::unlocks_after_closed_connection;

    #[test]
    fn a_closed_connection_unlocks_only_from_3_8_2_to_3_9_x() {
        assert!(!unlocks_after_closed_connection("3.8.1"));
        assert!(unlocks_after_closed_connection("3.9.1"));
        assert!(!unlocks_after_closed_connection("3.10.0"));
    }
}
