//! What Sentinel sends a server it reconfigures, word for word.
//!
//! Redis 7.0's `sentinel.c` (`sentinelSendSlaveOf`) never sends a bare
//! `SLAVEOF`: it sends one transaction that reconfigures the server,
//! rewrites its configuration file and disconnects every normal and
//! pub/sub client but its own ("in order to trigger the
//! ask-master-on-reconnection protocol for connected clients"), and
//! discards the replies. It does so to the replica it promotes (`SLAVEOF
//! NO ONE`), to every other replica (`SLAVEOF` the new primary) and, once
//! it sees the old primary still reporting itself a master, to the old
//! primary (`+convert-to-slave`). So a demoted primary's clients lose
//! their connections at the demotion; a client that reconnects to the
//! address it knows finds a replica until it learns the new primary.

use bytes::Bytes;

/// Sentinel's transaction making a server a replica of `primary`
/// (`HOST`, `PORT`), or a primary when `None`.
pub(crate) fn slave_of(primary: Option<(&str, u16)>) -> Vec<Vec<Bytes>> {
    let (host, port) = match primary {
        Some((host, port)) => (host.to_owned(), port.to_string()),
        None => ("NO".to_owned(), "ONE".to_owned()),
    };
    let words = |w: &[&str]| w.iter().map(|w| Bytes::from(w.to_string())).collect();
    vec![
        words(&["MULTI"]),
        words(&["SLAVEOF", &host, &port]),
        words(&["CONFIG", "REWRITE"]),
        words(&["CLIENT", "KILL", "TYPE", "normal"]),
        words(&["CLIENT", "KILL", "TYPE", "pubsub"]),
        words(&["EXEC"]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(commands: &[Vec<Bytes>]) -> Vec<String> {
        commands
            .iter()
            .map(|c| {
                let words: Vec<String> = c
                    .iter()
                    .map(|w| String::from_utf8_lossy(w).into_owned())
                    .collect();
                words.join(" ")
            })
            .collect()
    }

    /// The transaction is `sentinelSendSlaveOf`'s (Redis 7.0.15,
    /// sentinel.c), for a promotion and a demotion alike.
    #[test]
    fn the_transaction_is_sentinels() {
        assert_eq!(
            text(&slave_of(None)),
            [
                "MULTI",
                "SLAVEOF NO ONE",
                "CONFIG REWRITE",
                "CLIENT KILL TYPE normal",
                "CLIENT KILL TYPE pubsub",
                "EXEC"
            ]
        );
        assert_eq!(
            text(&slave_of(Some(("127.0.0.1", 6380))))[1],
            "SLAVEOF 127.0.0.1 6380"
        );
    }
}
