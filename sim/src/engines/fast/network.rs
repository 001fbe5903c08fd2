//! The network: one link per client, a latency per message, in order.

use std::time::Duration;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::model::drop_cause::DropCause;
use crate::model::fault::LinkRule;
use crate::model::history::Direction;
use crate::model::retransmission::Stall;
use crate::model::rng::{self, Stream};
use crate::{Fault, LatencyRange, SimTime};

/// What happens to one message, decided when it is sent. Rules run in a
/// fixed order: drop rate, then partition (TCP's retransmission), then
/// latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// It arrives at this instant.
    Deliver(SimTime),
    /// A partition holds it: it arrives at this instant, with TCP's
    /// retransmission.
    Held(SimTime),
    /// It is lost, and why (`partition`, `drop`).
    Drop(DropCause),
}

/// One client's link to Redis: both directions share a latency stream;
/// each direction keeps its messages in order.
#[derive(Debug)]
struct Link {
    rng: ChaCha8Rng,
    /// The arrival of the last message per direction ([up, down]): a later
    /// message never arrives before it.
    last: [SimTime; 2],
    /// Per direction, the partition stall under way, if any: what is sent
    /// into it arrives at its retransmission (`crate::model::retransmission`).
    stalls: [Option<Stall>; 2],
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
                stalls: [None; 2],
            })
            .collect();
        Network { base, links }
    }

    /// Draws every link's latencies and drops from the streams of `seed`
    /// from now on (a branch's fork); what is in flight keeps its arrival.
    pub(crate) fn reseed(&mut self, seed: u64) {
        for (c, link) in self.links.iter_mut().enumerate() {
            link.rng = rng::stream(seed, Stream::Link(c as u32));
        }
    }

    /// Decides the fate of a message sent now on `client`'s link, given
    /// the indexes of the plan's windows that cover now on that link
    /// (`crate::engines::fast::windows::Windows`), in plan order.
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
            if let LinkRule::Latency(r) = f.kind().link() {
                range = r;
            }
        }
        let Some(link) = self.links.get_mut(client) else {
            return Verdict::Drop(DropCause::NoLink);
        };
        let latency_us = rng::between(
            &mut link.rng,
            range.min_ms.saturating_mul(1_000),
            range.max_ms.saturating_mul(1_000),
        );
        let mut heal_ms = None;
        for &i in covering {
            let Some(f) = faults.get(i) else { continue };
            match f.kind().link() {
                LinkRule::DropChance(p) => {
                    if let Some(r) = fault_rngs.get_mut(i)
                        && r.random_bool(p.clamp(0.0, 1.0))
                    {
                        return Verdict::Drop(DropCause::Fault);
                    }
                }
                LinkRule::Retransmit => heal_ms = heal_ms.max(f.end_ms()),
                _ => {}
            }
        }
        let slot = match direction {
            Direction::Up => 0,
            Direction::Down => 1,
        };
        let mut earliest = link.last[slot];
        if let Some(heal_ms) = heal_ms {
            let now_d = Duration::from_micros(now.0);
            let heal = Duration::from_millis(heal_ms);
            let stall = Stall::held(link.stalls[slot], now_d, heal);
            link.stalls[slot] = Some(stall);
            let Some(until) = stall.until else {
                return Verdict::Drop(DropCause::Partition);
            };
            let until = SimTime(u64::try_from(until.as_micros()).unwrap_or(u64::MAX));
            earliest = earliest.max(until.plus_us(latency_us));
        }
        let extra_ms: u64 = covering
            .iter()
            .filter_map(|&i| match faults.get(i).map(|f| f.kind().link()) {
                Some(LinkRule::Delay(d, ms)) if d == direction => Some(ms),
                _ => None,
            })
            .sum();
        let at = now.plus_us(latency_us).plus_ms(extra_ms).max(earliest);
        link.last[slot] = at;
        if heal_ms.is_some() {
            Verdict::Held(at)
        } else {
            Verdict::Deliver(at)
        }
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
        Fault::Partition(crate::model::fault::Partition {
            client: "A".into(),
            at_ms,
            duration_ms,
        })
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
                Verdict::Held(at) => panic!("held without a fault, until {at:?}"),
                Verdict::Drop(why) => panic!("dropped without a fault: {why}"),
            }
        }
    }

    /// A partition longer than TCP's retries (15, ~924.6 s from the
    /// first held message) loses what is sent into it: the kernel gives
    /// up and resets the connection.
    #[test]
    fn a_partition_outlasting_the_retries_loses_the_message() {
        let faults = [partition(100, 900_000)];
        let mut rngs = vec![rng::stream(1, Stream::Fault(0))];
        let mut net = Network::new(1, LatencyRange::default(), 1);
        let v = net.send(
            SimTime::from_ms(100),
            0,
            "A",
            Direction::Up,
            &faults,
            &mut rngs,
        );
        assert_eq!(v, Verdict::Drop(DropCause::Partition));
        // One sent late in the window still gets through after the heal.
        let late = SimTime::from_ms(899_000);
        match net.send(late, 0, "A", Direction::Down, &faults, &mut rngs) {
            Verdict::Held(at) => assert!(at >= SimTime::from_ms(900_100), "{at:?}"),
            other => panic!("{other:?}"),
        }
    }

    /// A partition holds both directions while it lasts: what is sent
    /// into it arrives at the first retransmission after the heal (200 ms
    /// after the first held message, for a 50 ms partition), and what is
    /// sent after the heal queues behind it.
    #[test]
    fn partition_holds_both_directions_until_its_retransmission() {
        let faults = [partition(100, 50)];
        let mut rngs = vec![rng::stream(1, Stream::Fault(0))];
        let mut net = Network::new(1, LatencyRange::default(), 1);
        let retransmitted = SimTime::from_ms(300);
        for (ms, held) in [
            (99, false),
            (100, true),
            (149, true),
            (150, true),
            (400, false),
        ] {
            for dir in [Direction::Up, Direction::Down] {
                let (Verdict::Deliver(at) | Verdict::Held(at)) =
                    net.send(SimTime::from_ms(ms), 0, "A", dir, &faults, &mut rngs)
                else {
                    panic!("a partition loses nothing");
                };
                let from = if held {
                    retransmitted
                } else {
                    SimTime::from_ms(ms)
                };
                assert!(
                    at > from && at <= from.plus_ms(5),
                    "sent at {ms} ms {dir:?}: arrives at {at:?}"
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
        let all = [Fault::DropRate(crate::model::fault::DropRate {
            client: "A".into(),
            at_ms: 0,
            duration_ms: 1_000,
            probability: 1.0,
        })];
        let mut rngs = vec![rng::stream(1, Stream::Fault(0))];
        let mut net = Network::new(1, LatencyRange::default(), 1);
        let v = net.send(SimTime::from_ms(5), 0, "A", Direction::Up, &all, &mut rngs);
        assert_eq!(v, Verdict::Drop(DropCause::Fault));
        let slow = [Fault::Latency(crate::model::fault::Latency {
            client: "A".into(),
            at_ms: 0,
            duration_ms: 1_000,
            min_ms: 400,
            max_ms: 500,
        })];
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
        let faults = [Fault::DropRate(crate::model::fault::DropRate {
            client: "B".into(),
            at_ms: 0,
            duration_ms: 10_000,
            probability: 0.5,
        })];
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
    use crate::model::history::RecordKind;
    use crate::run::tests::{client, critical, holder_changes, records, spec, thread};
    use crate::{Fault, FaultPlan, SimTime, run};

    /// A partition loses nothing: the acquire sent into it at 1 s, while
    /// the link is cut from 0.5 s to 1.5 s, reaches Redis at TCP's
    /// retransmission 0.6 s after it was sent, and A holds the lock then.
    #[test]
    fn partition_delivers_at_the_retransmission() {
        let mut s = spec(vec![client("A", vec![thread(1_000, critical(10))])]);
        s.faults = FaultPlan(vec![Fault::Partition(crate::model::fault::Partition {
            client: "A".into(),
            at_ms: 500,
            duration_ms: 1_000,
        })]);
        let h = run(&s).expect("valid").history;
        let drops = records(&h, |k| matches!(k, RecordKind::Drop { .. })).count();
        assert_eq!(drops, 0, "{h}");
        let held = holder_changes(&h);
        let at = held[0].0;
        assert!(
            at >= SimTime::from_ms(1_600) && at < SimTime::from_ms(1_650),
            "acquired at {at:?}, not at the retransmission:\n{h}"
        );
        assert_eq!(held[0].1.as_deref(), Some("A/t1"));
    }
}
