//! Issue 49's reading of cluster deployments: every defect explore's
//! uniform swarm finds under a release in the runs that put Redis behind
//! a cluster proxy (`[sim.redis] proxy`) or make it a Redis Cluster
//! reached in cluster mode (`[sim.redis] shards`) or independent masters
//! (`[sim.redis] masters`), grouped by what it is named (its fix, or its
//! open upstream issue) and invariant, with its first seed to replay.
//! Writes `reports/proxy.md`, `reports/cluster.md` or
//! `reports/masters.md`.
//!
//! ```text
//! cargo run --release -p locksim --example cluster [SEEDS] [RELEASE] [proxy|shards|masters]
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rayon::prelude::*;
use sim::{SimSpec, Workload};

/// A seed of the deployment, its defects as (name, invariant), and
/// whether its run shows the deployment's own mark.
type Seen = (u64, Vec<(String, String)>, bool);

/// Which cluster deployment, and how its report reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Deployment {
    /// Behind a proxy: the mark is a command refused with `CROSSSLOT`.
    Proxy,
    /// In cluster mode: the mark is a fault on one master.
    Shards,
    /// Independent masters: the mark is a fault on one master.
    Masters,
}

impl Deployment {
    fn has(self, spec: &SimSpec) -> bool {
        match self {
            Deployment::Proxy => spec.redis.proxy,
            Deployment::Shards => spec.redis.shards > 0,
            Deployment::Masters => spec.redis.masters > 0,
        }
    }

    fn marked(self, spec: &SimSpec, timeline: &str) -> bool {
        match self {
            Deployment::Proxy => timeline.contains("CROSSSLOT"),
            // Every one has a fault on one master or slot (the swarm
            // makes one only for it): the column counts those that move
            // a slot (a cluster) or fail a master over (independent ones).
            Deployment::Shards => {
                (spec.faults.0.iter()).any(|f| matches!(f, sim::Fault::SlotMigration(_)))
            }
            Deployment::Masters => {
                (spec.faults.0.iter()).any(|f| matches!(f, sim::Fault::ShardFailover(_)))
            }
        }
    }

    fn words(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self {
            Deployment::Proxy => (
                "proxy",
                "# Defects behind a cluster proxy",
                "that put Redis behind a cluster proxy (`[sim.redis] proxy`)",
                "show a command refused with `CROSSSLOT`",
            ),
            Deployment::Shards => (
                "cluster",
                "# Defects in a Redis Cluster",
                "that make Redis a Redis Cluster reached in cluster mode (`[sim.redis] shards`)",
                "move a lock's slot to another master (`slot-migration`; every one pauses, restarts or fails over one master, or moves a slot)",
            ),
            Deployment::Masters => (
                "masters",
                "# Defects on independent masters",
                "that put a multi-lock's locks on independent masters (`[sim.redis] masters`)",
                "fail one master over to its replica (`shard-failover`; every one pauses, restarts or fails over one master)",
            ),
        }
    }
}

fn main() {
    let arg = |i: usize| std::env::args().nth(i);
    let seeds: u64 = arg(1).map_or(100_000, |a| a.parse().expect("a number of seeds"));
    let release: lockcore::Release = arg(2)
        .unwrap_or_else(|| "4.7.0".to_owned())
        .parse()
        .expect("a release");
    let deployment = match arg(3).as_deref() {
        None | Some("proxy") => Deployment::Proxy,
        Some("shards") => Deployment::Shards,
        Some("masters") => Deployment::Masters,
        Some(other) => panic!("unknown deployment {other:?}: proxy, shards or masters"),
    };
    // Folded in seed order.
    let found: Vec<Seen> = (0..seeds)
        .into_par_iter()
        .filter_map(|seed| {
            let spec = locksim::explored_spec_with(seed, Some(release), Workload::default());
            if !deployment.has(&spec) {
                return None;
            }
            let run = sim::run(&spec).expect("an explored spec runs");
            let marked = deployment.marked(&spec, &run.history.to_string());
            let defects = locksim::defects_of(&spec, &run)
                .into_iter()
                .map(|d| {
                    let name = match (&d.fixed_by, d.open_issue) {
                        (Some(fix), _) => format!("{} (`{}`)", fix.upstream, fix.switch),
                        (None, Some(open)) => format!("open: {}: {}", open.upstream, open.path),
                        (None, None) => "unnamed".to_owned(),
                    };
                    (name, d.invariant.to_string())
                })
                .collect();
            Some((seed, defects, marked))
        })
        .collect();
    let (file, title, which, mark) = deployment.words();
    let shown = found.len();
    let with_mark = found.iter().filter(|(_, _, m)| *m).count();
    let mut groups: BTreeMap<(String, String), (usize, usize, u64)> = BTreeMap::new();
    for (seed, defects, marked) in &found {
        for key in defects {
            let entry = groups.entry(key.clone()).or_insert((0, 0, *seed));
            entry.0 += 1;
            entry.1 += usize::from(*marked);
        }
    }
    let arg3 = match deployment {
        Deployment::Proxy => "",
        Deployment::Shards => " shards",
        Deployment::Masters => " masters",
    };
    let mut md = String::new();
    let _ = writeln!(md, "{title}\n");
    let _ = writeln!(
        md,
        "Written by `cargo run --release -p locksim --example cluster {seeds} {release}{arg3}` \
         (issue 49). Of seeds 0..{seeds} of explore's uniform swarm under {release}, the \
         {shown} {which} are run and judged; {with_mark} of them {mark}. Each defect is \
         named as explore names it: the fix that removes it, or the open upstream issue \
         whose path it took.\n"
    );
    let _ = writeln!(
        md,
        "| named | invariant | runs | of them that {mark} | replay the first |\n\
         |---|---|---:|---:|---|"
    );
    for ((name, invariant), (runs, marked, seed)) in &groups {
        let _ = writeln!(
            md,
            "| {name} | {invariant} | {runs} | {marked} | `locksim replay {seed} --redisson {release}` |"
        );
    }
    let path = format!("{}/../reports/{file}.md", env!("CARGO_MANIFEST_DIR"));
    std::fs::write(path, &md).expect("reports/ is writable");
    print!("{md}");
}
