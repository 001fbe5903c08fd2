//! The network: one link per client, a latency per message, in order.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::history::Direction;
use crate::rng::{self, Stream};
use crate::{Fault, LatencyRange, SimTime};

/// What happens to one message, decided when it is sent. Rules run in a
/// fixed order: partition, then drop rate, then latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// It arrives at this instant.
    Deliver(SimTime),
    /// It is lost, and why (`partition`, `drop`).
    Drop(&'static str),
}

/// One client's link to Redis: both directions share a latency stream;
/// each direction keeps its messages in order.
#[derive(Debug)]
struct Link {
    rng: ChaCha8Rng,
    /// The arrival of the last message per direction ([up, down]): a later
    /// message never arrives before it.
    last: [SimTime; 2],
}

/// Every client's link.
#[derive(Debug)]
pub(crate) struct Network {
    base: LatencyRange,
    links: Vec<Link>,
}

impl Network {
    pub(crate) fn new(seed: u64, base: LatencyRange, clients: usize) -> Network {
        let links = (0..clients)
            .map(|c| Link {
                rng: rng::stream(seed, Stream::Link(c as u32)),
                last: [SimTime::ZERO; 2],
            })
            .collect();
        Network { base, links }
    }

    /// Decides the fate of a message sent now on `client`'s link, given
    /// the indexes of the plan's windows that cover now on that link
    /// (`crate::windows::Windows`), in plan order.
    ///
    /// The latency is drawn for every message, dropped or not, so a drop
    /// window does not shift the latencies of later messages.
    pub(crate) fn send_covered(
        &mut self,
        now: SimTime,
        client: usize,
        direction: Direction,
        faults: &[Fault],
        covering: &[usize],
        fault_rngs: &mut [ChaCha8Rng],
    ) -> Verdict {
        let mut range = self.base;
        for f in covering.iter().filter_map(|&i| faults.get(i)) {
            if let Fault::Latency { min_ms, max_ms, .. } = f {
                range = LatencyRange {
                    min_ms: *min_ms,
                    max_ms: *max_ms,
                };
            }
        }
        let Some(link) = self.links.get_mut(client) else {
            return Verdict::Drop("no link");
        };
        let latency_us = rng::between(
            &mut link.rng,
            range.min_ms.saturating_mul(1_000),
            range.max_ms.saturating_mul(1_000),
        );
        for &i in covering {
            match faults.get(i) {
                Some(Fault::Partition { .. }) => return Verdict::Drop("partition"),
                Some(Fault::DropRate { probability, .. }) => {
                    if let Some(r) = fault_rngs.get_mut(i)
                        && r.random_bool(probability.clamp(0.0, 1.0))
                    {
                        return Verdict::Drop("drop");
                    }
                }
                _ => {}
            }
        }
        let slot = match direction {
            Direction::Up => 0,
            Direction::Down => 1,
        };
        let at = now.plus_us(latency_us).max(link.last[slot]);
        link.last[slot] = at;
        Verdict::Deliver(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Network {
        /// [`Network::send_covered`], finding the covering windows of
        /// `name`'s link by scanning the plan.
        fn send(
            &mut self,
            now: SimTime,
            client: usize,
            name: &str,
            direction: Direction,
            faults: &[Fault],
            fault_rngs: &mut [ChaCha8Rng],
        ) -> Verdict {
            let covering: Vec<usize> = faults
                .iter()
                .enumerate()
                .filter(|(_, f)| f.client() == Some(name) && f.covers_ms(now.as_ms()))
                .map(|(i, _)| i)
                .collect();
            self.send_covered(now, client, direction, faults, &covering, fault_rngs)
        }
    }

    fn partition(at_ms: u64, duration_ms: u64) -> Fault {
        Fault::Partition {
            client: "A".into(),
            at_ms,
            duration_ms,
        }
    }

    /// A message never overtakes an earlier one on the same link, even
    /// when its own latency draw is shorter.
    #[test]
    fn messages_stay_in_order_per_direction() {
        let mut net = Network::new(
            3,
            LatencyRange {
                min_ms: 1,
                max_ms: 50,
            },
            1,
        );
        let mut last = SimTime::ZERO;
        for i in 0..200 {
            let now = SimTime(i * 10);
            match net.send(now, 0, "A", Direction::Up, &[], &mut []) {
                Verdict::Deliver(at) => {
                    assert!(at >= last, "message {i} overtook an earlier one");
                    assert!(at >= now.plus_ms(1));
                    last = at;
                }
                Verdict::Drop(why) => panic!("dropped without a fault: {why}"),
            }
        }
    }

    /// A partition drops both directions while it lasts, and only then.
    #[test]
    fn partition_drops_both_directions_in_its_window() {
        let faults = [partition(100, 50)];
        let mut rngs = vec![rng::stream(1, Stream::Fault(0))];
        let mut net = Network::new(1, LatencyRange::default(), 1);
        for (ms, dropped) in [(99, false), (100, true), (149, true), (150, false)] {
            for dir in [Direction::Up, Direction::Down] {
                let v = net.send(SimTime::from_ms(ms), 0, "A", dir, &faults, &mut rngs);
                assert_eq!(
                    v == Verdict::Drop("partition"),
                    dropped,
                    "at {ms} ms {dir:?}"
                );
            }
        }
        let v = net.send(
            SimTime::from_ms(120),
            0,
            "B",
            Direction::Up,
            &faults,
            &mut rngs,
        );
        assert!(
            matches!(v, Verdict::Deliver(_)),
            "another client's link is not cut"
        );
    }

    /// A drop rate of 1 drops everything, of 0 nothing; a latency fault
    /// moves the draw into its range.
    #[test]
    fn drop_rate_and_latency_fault() {
        let all = [Fault::DropRate {
            client: "A".into(),
            at_ms: 0,
            duration_ms: 1_000,
            probability: 1.0,
        }];
        let mut rngs = vec![rng::stream(1, Stream::Fault(0))];
        let mut net = Network::new(1, LatencyRange::default(), 1);
        let v = net.send(SimTime::from_ms(5), 0, "A", Direction::Up, &all, &mut rngs);
        assert_eq!(v, Verdict::Drop("drop"));
        let slow = [Fault::Latency {
            client: "A".into(),
            at_ms: 0,
            duration_ms: 1_000,
            min_ms: 400,
            max_ms: 500,
        }];
        let v = net.send(
            SimTime::from_ms(5),
            0,
            "A",
            Direction::Down,
            &slow,
            &mut rngs,
        );
        let Verdict::Deliver(at) = v else {
            panic!("latency fault dropped a message")
        };
        assert!(
            at >= SimTime::from_ms(405) && at <= SimTime::from_ms(505),
            "{at}"
        );
    }

    /// Streams are per component: a drop-rate fault on B (drawing from
    /// its own stream) leaves A's latency draws exactly as they were.
    #[test]
    fn a_fault_on_b_does_not_shift_a_draws() {
        let faults = [Fault::DropRate {
            client: "B".into(),
            at_ms: 0,
            duration_ms: 10_000,
            probability: 0.5,
        }];
        let run = |faults: &[Fault]| {
            let mut rngs = vec![rng::stream(9, Stream::Fault(0))];
            let mut net = Network::new(
                9,
                LatencyRange {
                    min_ms: 1,
                    max_ms: 30,
                },
                2,
            );
            let mut a = Vec::new();
            for i in 0..50 {
                let now = SimTime::from_ms(i * 100);
                let _ = net.send(now, 1, "B", Direction::Up, faults, &mut rngs);
                a.push(net.send(now, 0, "A", Direction::Up, faults, &mut rngs));
            }
            a
        };
        assert_eq!(run(&faults), run(&[]));
    }
}

/// The rules above, seen through whole runs (lockcore and fake-redis).
#[cfg(test)]
mod end_to_end {
    use crate::history::RecordKind;
    use crate::run::tests::{client, critical, holder_changes, records, spec, thread};
    use crate::{Fault, FaultPlan, SimTime, run};

    /// A partition drops every message of the client in its window: the
    /// acquire sent during it never reaches Redis (lockcore retries after
    /// its response timeout, and the retry after the partition succeeds).
    #[test]
    fn partition_drops_messages() {
        let mut s = spec(vec![client("A", vec![thread(1_000, critical(10))])]);
        s.faults = FaultPlan(vec![Fault::Partition {
            client: "A".into(),
            at_ms: 500,
            duration_ms: 2_000,
        }]);
        let h = run(&s).expect("valid").history;
        let drops: Vec<_> = records(&h, |k| matches!(k, RecordKind::Drop { .. })).collect();
        assert!(!drops.is_empty(), "{h}");
        assert!(
            drops
                .iter()
                .all(|r| r.at >= SimTime::from_ms(500) && r.at < SimTime::from_ms(2_500))
        );
        let held = holder_changes(&h);
        assert!(
            held[0].0 > SimTime::from_ms(2_500),
            "acquired through the partition:\n{h}"
        );
        assert_eq!(held[0].1.as_deref(), Some("A/t1"));
    }
}
