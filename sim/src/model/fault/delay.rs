//! `delay-replies` and `delay-requests`: one direction of a client's link
//! runs late, so a command runs on Redis but its answer can come after
//! the client's response timeout (REDISSON.md §4: the acquire resent after
//! a timeout of Redisson #1966, the unlock resent before 3.24's latch).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Fault, Invalid, Kind, LinkRule};
use crate::Direction;

/// Redis's replies (and pub/sub messages) to the client arrive `delay_ms`
/// later than the link's latency while the window lasts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DelayReplies {
    /// The client.
    pub client: String,
    /// When.
    pub at_ms: u64,
    /// For how long.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
    /// The extra one-way delay of each reply sent in the window.
    #[schemars(range(max = crate::MAX_DELAY_MS))]
    pub delay_ms: u64,
}

/// The client's requests reach Redis `delay_ms` later than the link's
/// latency while the window lasts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DelayRequests {
    /// The client.
    pub client: String,
    /// When.
    pub at_ms: u64,
    /// For how long.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
    /// The extra one-way delay of each request sent in the window.
    #[schemars(range(max = crate::MAX_DELAY_MS))]
    pub delay_ms: u64,
}

fn check_delay(delay_ms: u64) -> Result<(), Invalid> {
    if delay_ms > crate::MAX_DELAY_MS {
        return Err((
            "delay_ms",
            format!(
                "must be at most an hour ({} ms), got {delay_ms}",
                crate::MAX_DELAY_MS
            ),
        ));
    }
    Ok(())
}

macro_rules! one_way {
    ($ty:ident, $direction:expr, $word:literal) => {
        impl Kind for $ty {
            client_window!();

            fn check(&self, _horizon_ms: u64) -> Result<(), Invalid> {
                check_delay(self.delay_ms)
            }

            /// A message sent just before the window ends arrives up to
            /// the delay after it.
            fn effect_end_ms(&self) -> Option<u64> {
                self.end_ms().map(|e| e.saturating_add(self.delay_ms))
            }

            fn text(&self) -> String {
                format!(
                    concat!($word, " {} {}ms (+{}ms)"),
                    self.client, self.duration_ms, self.delay_ms
                )
            }

            fn link(&self) -> LinkRule {
                LinkRule::Delay($direction, self.delay_ms)
            }
        }
    };
}

one_way!(DelayReplies, Direction::Down, "delay replies");
one_way!(DelayRequests, Direction::Up, "delay requests");

/// Delays around the 3 s response timeout: shorter, about it, longer.
fn delay(r: &mut ChaCha8Rng) -> u64 {
    r.random_range(500..=8_000)
}

pub(crate) fn generate_replies(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::DelayReplies(DelayReplies {
        client: d.client,
        at_ms: d.at_ms,
        duration_ms: d.duration_ms,
        delay_ms: delay(r),
    })
}

pub(crate) fn generate_requests(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::DelayRequests(DelayRequests {
        client: d.client,
        at_ms: d.at_ms,
        duration_ms: d.duration_ms,
        delay_ms: delay(r),
    })
}

#[cfg(test)]
mod tests {
    use crate::model::history::RecordKind;
    use crate::run::tests::{client, critical, spec, thread};
    use crate::{Fault, FaultPlan, run};

    use super::*;

    /// Delayed replies: A's acquire runs on Redis at once, but its reply
    /// comes 4 s later, after lockcore's 3 s response timeout, so the
    /// acquire is resent (redisson, as before 3.37) and Redis sees it
    /// twice; the hold count reaches 2 (Redisson #1966).
    #[test]
    fn a_late_reply_makes_the_acquire_run_twice() {
        let mut s = spec(vec![client("A", vec![thread(100, critical(10))])]);
        s.faults = FaultPlan(vec![Fault::DelayReplies(DelayReplies {
            client: "A".into(),
            at_ms: 0,
            duration_ms: 1_000,
            delay_ms: 4_000,
        })]);
        let h = run(&s).expect("valid").history;
        let counts: Vec<i64> = h
            .records
            .iter()
            .filter_map(|r| match &r.kind {
                RecordKind::Server { count, .. } => Some(*count),
                _ => None,
            })
            .collect();
        assert!(counts.contains(&2), "the acquire ran once:\n{h}");
        assert!(
            h.to_string()
                .contains("delay replies A 1000ms (+4000ms) begins"),
            "{h}"
        );
    }

    /// Delayed requests: the acquire reaches Redis 2 s late; nothing runs
    /// on Redis before it arrives.
    #[test]
    fn a_late_request_reaches_redis_late() {
        let mut s = spec(vec![client("A", vec![thread(100, critical(10))])]);
        s.faults = FaultPlan(vec![Fault::DelayRequests(DelayRequests {
            client: "A".into(),
            at_ms: 0,
            duration_ms: 1_000,
            delay_ms: 2_000,
        })]);
        let h = run(&s).expect("valid").history;
        let first = h
            .records
            .iter()
            .find(|r| matches!(r.kind, RecordKind::Server { .. }))
            .expect("the acquire ran");
        assert!(first.at >= crate::SimTime::from_ms(2_100), "{h}");
    }
}
