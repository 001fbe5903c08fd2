//! An audit's promises: each exposure replays with its command to the
//! same upstream issue, its minimal scenario still shows the defect, the
//! same audit gives the same bytes, and the usage's misuse is named.

use lockcore::{Release, Version};

use super::{AuditOptions, Tailor, Usage, audit, render, replay};
use crate::{SeedRange, Settings, Trial};

fn options(version: Version, seeds: u64) -> AuditOptions {
    AuditOptions {
        release: Release::version(version),
        settings: Settings::default(),
        tailor: Tailor(None),
        range: SeedRange::new(0, seeds).expect("a range"),
        notes: Vec::new(),
        command: format!("locksim audit --redisson {version}"),
    }
}

/// 3.23.4 (before the unlock latch) is exposed to #4871 within a few
/// hundred seeds; every exposure's replay shows a defect of the same
/// upstream issue, and its minimal scenario breaks its invariant as a
/// defect when run as a file.
#[test]
fn every_exposure_replays_to_its_upstream_issue() {
    let o = options(Version::new(3, 23, 4), 300);
    let a = audit(&o).expect("audits");
    assert!(a.exposed(), "{}", render::text(&a));
    assert!(
        a.sweep
            .exposures
            .iter()
            .any(|e| e.status.title().starts_with("#4871")),
        "{}",
        render::text(&a)
    );
    for e in &a.sweep.exposures {
        let (_, statuses) = replay(e.seeds[0], &o).expect("replays");
        assert!(statuses.contains(&e.status), "{}: {statuses:?}", e.replay);
        let minimal = e.minimal.as_ref().expect("shrunk");
        let trial = Trial::run(minimal, None, None).expect("runs");
        assert!(
            trial
                .run
                .violations
                .iter()
                .any(|v| v.invariant == e.invariant && v.cause == sim::Cause::Defect),
            "{}",
            minimal.name
        );
        assert!(trial.as_expected(), "{}", minimal.name);
    }
}

/// The same audit gives the same text and JSON.
#[test]
fn an_audit_is_deterministic() {
    let o = options(Version::new(3, 44, 0), 150);
    let (a, b) = (audit(&o).expect("audits"), audit(&o).expect("audits"));
    assert_eq!(render::text(&a), render::text(&b));
    let json = |x| serde_json::to_string(x).expect("json");
    assert_eq!(json(&a), json(&b));
}

/// A lease no longer than the work is named as misuse, and a watchdog
/// timeout a timer tick can outlast too.
#[test]
fn the_usages_misuse_is_named() {
    let mut o = options(Version::new(4, 7, 0), 20);
    o.settings.watchdog_timeout_ms = 300;
    o.tailor = Tailor(Some(Usage {
        lease_ms: Some(500),
        work_ms: Some(2_000),
        ..Usage::default()
    }));
    let a = audit(&o).expect("audits");
    assert!(
        a.misuse
            .iter()
            .any(|m| m.contains("lockWatchdogTimeout 300 ms")),
        "{:?}",
        a.misuse
    );
    assert!(
        a.misuse.iter().any(|m| m.contains("a lease of 500 ms")),
        "{:?}",
        a.misuse
    );
}

/// The guide's example configs, as `locksim audit --config` reads them.
fn example(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs/src/audit.in")
        .join(name)
}

/// A Sentinel config on 3.45.0: its watchdog timeout, timeout and
/// retries reach the settings, it runs with replicas, and what the audit
/// cannot model (Sentinel itself, the pools) is listed.
#[test]
fn a_config_file_gives_its_settings_and_notes() {
    let (settings, notes) =
        super::config_file(&example("sentinel-3.45.0.yaml"), Version::new(3, 45, 0))
            .expect("reads");
    assert_eq!(settings.watchdog_timeout_ms, 5_000);
    assert_eq!(
        (settings.timeout_ms, settings.retry_attempts),
        (Some(2_000), Some(3))
    );
    assert_eq!(settings.retry_interval_ms, Some(1_000));
    assert!(settings.replicated);
    // Sentinel mode reaches every client (#6026's pub/sub after a restart).
    assert!(settings.sentinel);
    assert!(
        notes.iter().any(|n| n.starts_with("sentinelServersConfig")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("masterConnectionPoolSize")),
        "{notes:?}"
    );
    let (single, _) =
        super::config_file(&example("single-3.23.4.yaml"), Version::new(3, 23, 4)).expect("reads");
    assert!(!single.replicated && !single.sentinel);
}

/// A cluster config on 4.7.0 (`clusterServersConfig`): every audited
/// run is a cluster in cluster mode, of the masters explore drew or
/// three, each with a replica or the two explore drew, and no fault on
/// one primary's replicas, and the note says what is modelled; a single
/// server's runs are never a cluster and keep no fault on one master.
#[test]
fn a_cluster_config_runs_on_a_cluster() {
    let (settings, notes) =
        super::config_file(&example("cluster-4.7.0.yaml"), Version::new(4, 7, 0)).expect("reads");
    assert!(settings.cluster && !settings.replicated && !settings.sentinel);
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("clusterServersConfig: modelled as a cluster")),
        "{notes:?}"
    );
    let tailor = Tailor(None);
    let release = Release::version(Version::new(4, 7, 0));
    let (mut paused, mut failovers) = (0, 0);
    for seed in 0..300 {
        let spec = super::audited_spec(seed, release, &settings, &tailor);
        assert!(
            spec.redis.shards >= 2 && (1..=2).contains(&spec.redis.replicas),
            "seed {seed}"
        );
        assert!(spec.clients.iter().all(|c| c.mode.is_none()), "seed {seed}");
        let one_primary =
            |f: &sim::Fault| f.shard().is_none() && sim::verbs(f).iter().any(|v| v.on_replicas());
        assert!(!spec.faults.0.iter().any(one_primary), "seed {seed}");
        failovers +=
            usize::from((spec.faults.0.iter()).any(|f| matches!(f, sim::Fault::ShardFailover(_))));
        assert_eq!(sim::validate_spec(&spec), Ok(()), "seed {seed}");
        paused += usize::from(spec.faults.0.iter().any(|f| f.shard().is_some()));
        let plain = super::audited_spec(seed, release, &Settings::default(), &tailor);
        assert_eq!(plain.redis.shards, 0, "seed {seed}");
        assert!((plain.faults.0.iter()).all(|f| f.shard().is_none() && f.slot_move().is_none()));
    }
    assert!(paused > 10, "{paused} of 300 seeds pause a master");
    assert!(failovers > 5, "{failovers} of 300 seeds fail a master over");
}

/// The Sentinel example config on 3.45.0, over the first `seeds` seeds.
fn sentinel_options(seeds: u64) -> AuditOptions {
    let version = Version::new(3, 45, 0);
    let (settings, notes) =
        super::config_file(&example("sentinel-3.45.0.yaml"), version).expect("reads");
    AuditOptions {
        settings,
        notes,
        range: SeedRange::new(0, seeds).expect("a range"),
        ..options(version, 1)
    }
}

/// A bad config is one error naming the file, the key and its line.
#[test]
fn a_bad_config_names_the_key_and_line() {
    let err = super::config_file(&example("bad.yaml"), Version::new(3, 23, 4)).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("bad.yaml") && text.contains("line "),
        "{text}"
    );
    assert!(text.contains("singleServerConfig.timeout"), "{text}");
}

/// With replicas (a Sentinel config), every exposure's replay still
/// names its upstream issue.
#[test]
fn a_replicated_configs_exposures_replay_to_their_issue() {
    let o = sentinel_options(200);
    let a = audit(&o).expect("audits");
    for e in &a.sweep.exposures {
        let (_, statuses) = replay(e.seeds[0], &o).expect("replays");
        assert!(statuses.contains(&e.status), "{}: {statuses:?}", e.replay);
    }
}

/// Behind a cluster proxy (`--behind-proxy`), 4.7.0 is exposed to #6867
/// (the batched renewal's cross-slot `EVAL`), whose replay shows the
/// proxy's `CROSSSLOT`; the same release on a plain server is not, and
/// no run of a plain server's audit is behind a proxy.
#[test]
fn behind_a_proxy_the_batched_renewal_is_exposed_6867() {
    let six_eight = |a: &super::Audit| {
        a.sweep
            .exposures
            .iter()
            .find(|e| e.status.title().starts_with("#6867"))
            .cloned()
    };
    // Critical sections longer than a short watchdog's timeout: a lock
    // held past the timeout after a refused round is lost.
    let long_work = |o: &mut AuditOptions| {
        o.settings.watchdog_timeout_ms = 5_000;
        o.tailor = Tailor(Some(Usage {
            work_ms: Some(20_000),
            ..Usage::default()
        }));
    };
    let mut o = options(Version::new(4, 7, 0), 300);
    o.settings.proxy = true;
    long_work(&mut o);
    let a = audit(&o).expect("audits");
    let e = six_eight(&a).unwrap_or_else(|| panic!("{}", render::text(&a)));
    assert!(render::text(&a).contains("a cluster behind a proxy"));
    let (trial, statuses) = replay(e.seeds[0], &o).expect("replays");
    assert!(statuses.contains(&e.status), "{statuses:?}");
    assert!(trial.run.history.to_string().contains("CROSSSLOT"));

    let mut plain = options(Version::new(4, 7, 0), 300);
    long_work(&mut plain);
    let plain = audit(&plain).expect("audits");
    assert!(six_eight(&plain).is_none(), "{}", render::text(&plain));
}

/// On a replicated endpoint (`--replicated-endpoint`: a
/// `singleServerConfig` in front of a primary with replicas), every run
/// has replicas and single-server clients, which send no `WAIT`, its
/// failovers stay, and a failover loses a lock no fix prevents: the
/// audit counts it beyond the guarantee, and its text names the
/// deployment. On a plain single server no run has a replica.
#[test]
fn a_replicated_endpoint_keeps_replicas_and_sends_no_wait() {
    let mut o = options(Version::new(4, 7, 0), 200);
    o.settings.replicated_endpoint = true;
    let mut failovers = 0;
    for seed in 0..200 {
        let spec = super::audited_spec(seed, o.release, &o.settings, &o.tailor);
        assert!(spec.redis.replicas >= 1, "seed {seed}");
        assert!(
            spec.clients
                .iter()
                .all(|c| c.mode == Some(lockcore::ServerMode::Single)),
            "seed {seed}"
        );
        failovers += usize::from(
            spec.faults
                .0
                .iter()
                .any(|f| matches!(f, sim::Fault::Failover(_) | sim::Fault::Switchover(_))),
        );
        let plain = super::audited_spec(seed, o.release, &Settings::default(), &o.tailor);
        assert_eq!(plain.redis.replicas, 0, "seed {seed}");
    }
    assert!(failovers > 10, "{failovers} of 200 seeds fail over");
    let a = audit(&o).expect("audits");
    let text = render::text(&a);
    assert!(
        text.contains("in front of a primary with replicas"),
        "{text}"
    );
    assert!(
        a.sweep
            .by_cause
            .get("beyond-guarantee")
            .is_some_and(|&n| n > 0),
        "{text}"
    );
}

/// The Sentinel config's runs that a later release breaks again on the
/// same key by another path are attributed by their clients too: seed
/// 1862 renews B's write lock after its unlock through a stale head
/// (#6144), where 4.7.0 renews A's read lock after an interrupted
/// acquire; seed 2517 needs #6144 and #7272 together, and 4.7.0 still
/// shows it, so it is #7272's, which no release fixes.
#[test]
fn a_defect_a_later_release_shows_by_another_path_is_attributed() {
    let o = sentinel_options(1);
    let titles = |seed| {
        let (_, statuses) = replay(seed, &o).expect("replays");
        statuses.iter().map(|s| s.title()).collect::<Vec<_>>()
    };
    let t = titles(1862);
    assert!(t.iter().any(|t| t.starts_with("#6144")), "{t:?}");
    let t = titles(2517);
    assert!(!t.iter().any(|t| t.starts_with("unattributed")), "{t:?}");
    assert!(t.iter().any(|t| t.starts_with("#7272")), "{t:?}");
}
