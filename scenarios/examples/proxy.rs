//! Issue 49's reading of cluster deployments: every defect explore's
//! uniform swarm finds under a release in the runs that put Redis behind
//! a cluster proxy (`[sim.redis] proxy`), grouped by what it is named
//! (its fix, or its open upstream issue) and invariant, with its first
//! seed to replay. Writes `reports/proxy.md`.
//!
//! ```text
//! cargo run --release -p locksim --example proxy [SEEDS] [RELEASE]
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rayon::prelude::*;
use sim::Workload;

/// A proxied seed, its defects as (name, invariant), and whether its
/// timeline shows a refused `CROSSSLOT`.
type Proxied = (u64, Vec<(String, String)>, bool);

fn main() {
    let seeds: u64 = std::env::args()
        .nth(1)
        .map_or(100_000, |a| a.parse().expect("a number of seeds"));
    let release: lockcore::Release = std::env::args()
        .nth(2)
        .unwrap_or_else(|| "4.7.0".to_owned())
        .parse()
        .expect("a release");
    // Folded in seed order.
    let found: Vec<Proxied> = (0..seeds)
        .into_par_iter()
        .filter_map(|seed| {
            let spec = locksim::explored_spec_with(seed, Some(release), Workload::default());
            if !spec.redis.proxy {
                return None;
            }
            let run = sim::run(&spec).expect("an explored spec runs");
            let crossslot = run.history.to_string().contains("CROSSSLOT");
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
            Some((seed, defects, crossslot))
        })
        .collect();
    let proxied = found.len();
    let refused = found.iter().filter(|(_, _, c)| *c).count();
    let mut groups: BTreeMap<(String, String), (usize, usize, u64)> = BTreeMap::new();
    for (seed, defects, crossslot) in &found {
        for key in defects {
            let entry = groups.entry(key.clone()).or_insert((0, 0, *seed));
            entry.0 += 1;
            entry.1 += usize::from(*crossslot);
        }
    }
    let mut md = String::new();
    let _ = writeln!(md, "# Defects behind a cluster proxy\n");
    let _ = writeln!(
        md,
        "Written by `cargo run --release -p locksim --example proxy {seeds} {release}` \
         (issue 49). Of seeds 0..{seeds} of explore's uniform swarm under {release}, the \
         {proxied} that put Redis behind a cluster proxy (`[sim.redis] proxy`) are run and \
         judged; {refused} of them show a command refused with `CROSSSLOT`. Each defect is \
         named as explore names it: the fix that removes it, or the open upstream issue \
         whose path it took.\n"
    );
    let _ = writeln!(
        md,
        "| named | invariant | runs | of them with a CROSSSLOT | replay the first |\n\
         |---|---|---:|---:|---|"
    );
    for ((name, invariant), (runs, refused, seed)) in &groups {
        let _ = writeln!(
            md,
            "| {name} | {invariant} | {runs} | {refused} | `locksim replay {seed} --redisson {release}` |"
        );
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../reports/proxy.md");
    std::fs::write(path, &md).expect("reports/ is writable");
    print!("{md}");
}
