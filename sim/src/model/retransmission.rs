//! TCP's retransmission timer: when what a partition held arrives.
//!
//! A partition drops packets, not connections. The sender's kernel keeps
//! what it wrote and retransmits the oldest unacknowledged segment on a
//! timer that starts at 200 ms (Linux's `TCP_RTO_MIN`, the timeout of a
//! connection whose round trip is well under it, as on a LAN) and doubles
//! after every miss up to 120 s (`TCP_RTO_MAX`); after `tcp_retries2` = 15
//! retransmissions (about 924.6 s) it gives up and resets the connection.
//! The first retransmission after the link heals gets through, and with it
//! everything written behind it, in order. So a renewal sent into a
//! partition is neither lost nor delivered at the heal: it arrives at an
//! instant of that doubling schedule, counted from when the first lost
//! segment was sent, which can be well after the heal (and after a key's
//! expiry): one sent at 10.1 s into a partition healing at 25 s arrives at
//! 35.5 s.
//!
//! Every engine uses this schedule: the fast engine for each connection of
//! a client's link (`crate::engines::fast::network`), the turmoil engine where a
//! connection's end reads (`crate::engines::hosted::delay`), the real-Redis engine
//! in its loopback proxy. A partition opening while a connection is still
//! stalled by an earlier one is not looked ahead to: the stall's arrival is
//! the first retransmission after the latest heal known when a held
//! message was sent.

use std::time::Duration;

/// The first retransmission timeout (Linux's `TCP_RTO_MIN`).
const RTO_MIN: Duration = Duration::from_millis(200);
/// The longest (Linux's `TCP_RTO_MAX`).
const RTO_MAX: Duration = Duration::from_secs(120);
/// Retransmissions before the connection is reset (`tcp_retries2`).
const RETRIES: u32 = 15;

/// How long after the first lost segment was sent the link's data
/// arrives, when the link heals `heal_after` after that send: the first
/// retransmission at or after the heal. `None` when the kernel gives up
/// first (the connection is reset and what it held is lost).
pub(crate) fn delivered_after(heal_after: Duration) -> Option<Duration> {
    let mut at = Duration::ZERO;
    let mut rto = RTO_MIN;
    for _ in 0..RETRIES {
        at += rto;
        if at >= heal_after {
            return Some(at);
        }
        rto = (rto * 2).min(RTO_MAX);
    }
    None
}

/// One connection's direction stalled by a partition, in simulated time
/// since the run's start: when its first lost segment was sent, and when
/// what it holds arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stall {
    /// When the first lost segment was sent (the timer's origin).
    pub(crate) since: Duration,
    /// The retransmission that gets through; `None`: the connection is
    /// reset.
    pub(crate) until: Option<Duration>,
}

impl Stall {
    /// A segment is sent at `now` while a partition heals at `heal`:
    /// the stall it starts, or the one under way with `heal` taken in.
    pub(crate) fn held(current: Option<Stall>, now: Duration, heal: Duration) -> Stall {
        let arrival = |since: Duration| delivered_after(heal.max(since) - since).map(|d| since + d);
        match current {
            Some(s) if s.holds_at(now) => Stall {
                since: s.since,
                until: s.until.zip(arrival(s.since)).map(|(a, b)| a.max(b)),
            },
            _ => Stall {
                since: now,
                until: arrival(now),
            },
        }
    }

    /// Whether a segment sent at `now` still waits behind this stall.
    pub(crate) fn holds_at(&self, now: Duration) -> bool {
        self.until.is_none_or(|u| now < u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// The doubling schedule: 0.2, 0.6, 1.4, 3.0, 6.2, 12.6, 25.4, 51.0,
    /// 102.2, 204.6 s, then every 120 s to 804.6 s; beyond, a reset.
    #[test]
    fn the_first_retransmission_at_or_after_the_heal() {
        for (heal, want) in [
            (0, Some(200)),
            (200, Some(200)),
            (201, Some(600)),
            (14_900, Some(25_400)),
            (25_400, Some(25_400)),
            (25_401, Some(51_000)),
            (200_000, Some(204_600)),
            (300_000, Some(324_600)),
            (804_600, Some(804_600)),
            (804_601, None),
        ] {
            assert_eq!(
                delivered_after(ms(heal)),
                want.map(ms),
                "heal after {heal} ms"
            );
        }
    }

    /// The documents' partitions, as real TCP gives them: network-drop-30s
    /// (a renewal sent at 10.1 s, healed at 25 s) arrives at 35.5 s, after
    /// the 30 s expiry; a segment sent at 20 s into a partition healing at
    /// 35 s arrives at 45.4 s.
    #[test]
    fn the_documents_partitions() {
        let at = |sent: u64, heal: u64| Stall::held(None, ms(sent), ms(heal)).until;
        assert_eq!(at(10_100, 25_000), Some(ms(35_500)));
        assert_eq!(at(20_000, 35_000), Some(ms(45_400)));
    }

    /// Later segments wait behind the first: the stall keeps its origin,
    /// and a later heal moves its arrival on the same schedule.
    #[test]
    fn a_stall_keeps_its_origin() {
        let first = Stall::held(None, ms(1_000), ms(2_000));
        assert_eq!(first.until, Some(ms(2_400)));
        assert!(first.holds_at(ms(2_399)) && !first.holds_at(ms(2_400)));
        let again = Stall::held(Some(first), ms(1_500), ms(2_000));
        assert_eq!(again, first);
        let later = Stall::held(Some(first), ms(2_100), ms(4_000));
        assert_eq!(later.since, ms(1_000));
        assert_eq!(later.until, Some(ms(4_000)));
        // Once it has arrived, a new partition starts a new stall.
        let fresh = Stall::held(Some(first), ms(3_000), ms(3_100));
        assert_eq!(fresh.since, ms(3_000));
        assert_eq!(fresh.until, Some(ms(3_200)));
    }
}
