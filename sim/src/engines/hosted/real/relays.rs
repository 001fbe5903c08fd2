//! The replication links of the real engine's replicas, each through a
//! loopback relay (the clients' [`Proxy`]) that can hold its bytes.
//!
//! A replica follows `REPLICAOF 127.0.0.1 <its relay>`, and the relay
//! connects to the primary. A `replication-drop` closes the gates of the
//! relays it stalls, both ways: the replica stays connected (the primary
//! counts it in `INFO` and in `WAIT`'s numbers, as a stall shorter than
//! `repl-timeout` leaves it) but reads nothing and acknowledges nothing,
//! and when the window ends it reads what the relay held. `DEBUG SLEEP` on
//! the replica could not do this across a promotion: the sleeping
//! replica would read the window's writes from its socket on waking, and
//! could not answer as the new primary meanwhile.
//!
//! When the primary's process is killed every relay is cut: what it
//! carried from the primary, or held, is lost with it, as the other
//! engines lose the writes a failed primary had not delivered (a killed
//! process's kernel would still send what its socket held; locksim's
//! failover loses it, on every engine).
//!
//! A promotion gives every node a new relay to the new primary, so that
//! each replica's `SLAVEOF` names a new address and Redis connects at
//! once (to the address it already follows it answers "Already connected"
//! and reconnects only at its next cron, a real second later); the old
//! relays are cut and what they held is lost, as the writes of a failed
//! primary are. A stall still open holds the new relays of the replicas
//! it stalls, as the other engines hold the new primary's writes.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::SimError;
use crate::engines::hosted::proxy::{Link, Outage, Proxy};

use super::failed;

/// One node's relay.
struct Relay {
    port: u16,
    link: Rc<Link>,
    /// Closes what it relays.
    cuts: Rc<Outage>,
}

impl Relay {
    /// A relay to `primary`.
    async fn start(primary: &str, scale: u64) -> Result<Relay, SimError> {
        let link = Rc::new(Link {
            scale,
            resumes_at_open: true,
            ..Link::default()
        });
        let cuts = Rc::new(Outage::default());
        let upstream = Rc::new(RefCell::new(primary.to_owned()));
        // A relay has no delay to draw: its generator is never used.
        let rng = ChaCha8Rng::seed_from_u64(0);
        let proxy = Proxy::start(upstream, link.clone(), cuts.clone(), rng)
            .await
            .map_err(|e| failed(format!("cannot start a replication relay: {e}")))?;
        Ok(Relay {
            port: proxy.addr.port(),
            link,
            cuts,
        })
    }

    /// Holds its bytes both ways (`on`), or lets them go.
    fn hold(&self, on: bool) {
        for rules in [&self.link.up, &self.link.down] {
            if on {
                rules.held.close();
            } else {
                rules.held.open();
            }
        }
    }
}

/// An open stall: which replica it stalls (all when `None`) and the
/// relays it holds.
struct Stall {
    replica: Option<usize>,
    held: Vec<Rc<Relay>>,
}

/// Every node's relay, and the stalls holding some.
pub(super) struct Relays {
    /// Per node (none without replicas).
    relays: Vec<Rc<Relay>>,
    /// The open `replication-drop` windows, by their place in the plan.
    stalls: BTreeMap<usize, Stall>,
}

impl Relays {
    /// A relay per node of `nodes` to `primary`; none when there is no
    /// replica.
    pub(super) async fn start(primary: &str, nodes: usize, scale: u64) -> Result<Relays, SimError> {
        let mut relays = Vec::new();
        if nodes > 1 {
            for _ in 0..nodes {
                relays.push(Rc::new(Relay::start(primary, scale).await?));
            }
        }
        Ok(Relays {
            relays,
            stalls: BTreeMap::new(),
        })
    }

    /// The port node `node` replicates through.
    pub(super) fn port(&self, node: usize) -> u16 {
        self.relays.get(node).map_or(0, |r| r.port)
    }

    /// Stall `i` holds the relays of `nodes`, replica `replica`'s alone or
    /// every replica's (`None`).
    pub(super) fn hold(&mut self, i: usize, replica: Option<usize>, nodes: &[usize]) {
        let held: Vec<Rc<Relay>> = nodes
            .iter()
            .filter_map(|&n| self.relays.get(n).cloned())
            .collect();
        held.iter().for_each(|r| r.hold(true));
        self.stalls.insert(i, Stall { replica, held });
    }

    /// Stall `i` ends: the relays it held let their bytes go.
    pub(super) fn release(&mut self, i: usize) {
        if let Some(stall) = self.stalls.remove(&i) {
            stall.held.iter().for_each(|r| r.hold(false));
        }
    }

    /// The primary died: what every relay carried from it, or held, is
    /// lost with it, as the other engines lose the writes it had not
    /// delivered (a replica reconnects to its relay, which finds no
    /// primary until the promotion).
    pub(super) fn cut(&self) {
        self.relays.iter().for_each(|r| r.cuts.cut());
    }

    /// A promotion: every node follows `fresh` relays (to the new
    /// primary), and what the old ones relayed is cut. `replicas` lists
    /// the replicas' nodes in the plan's numbering, for the stalls still
    /// open.
    pub(super) fn renew(&mut self, fresh: Relays, replicas: &[usize]) {
        for old in std::mem::replace(&mut self.relays, fresh.relays) {
            old.cuts.cut();
        }
        for stall in self.stalls.values_mut() {
            let nodes: Vec<usize> = match stall.replica {
                Some(k) => replicas.get(k).copied().into_iter().collect(),
                None => replicas.to_vec(),
            };
            for n in nodes {
                if let Some(relay) = self.relays.get(n).cloned() {
                    relay.hold(true);
                    stall.held.push(relay);
                }
            }
        }
    }
}
