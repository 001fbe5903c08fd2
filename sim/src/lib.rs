//! sim: locksim's deterministic discrete-event engine.
//!
//! A [`SimSpec`] (clients, their threads' scripts, settings, a
//! [`FaultPlan`] and a seed) goes in; [`run`] drives the real lock
//! algorithm (lockcore's sans-IO `LockClient`) against an in-process Redis
//! (fake-redis's `Engine`) over a simulated network, records a [`History`]
//! and judges it with the invariant checkers ([`check_all`]).
//!
//! # The model
//!
//! - **Virtual time** in microseconds ([`SimTime`]). Pending events sit in
//!   a queue ordered by (time, order scheduled); the clock jumps from one
//!   event to the next, so a 40-second scenario with a few dozen events
//!   costs microseconds of wall time. Ties run in the order they were
//!   scheduled.
//! - **Redis**: one fake-redis `Engine` whose `ManualClock` is set to the
//!   virtual time (whole ms, plus a fixed epoch) before every command.
//!   Each client life has a command connection and a pub/sub connection,
//!   opened on first use.
//! - **Clients**: one process per [`ClientSpec`], holding one lockcore
//!   `LockClient` (its profile, its `lockWatchdogTimeout`, a uuid drawn
//!   from the seed in UUID v4 form) and threads that run [`Step`] scripts.
//!   lockcore's timers become events at their virtual ms; its commands and
//!   subscriptions become messages.
//! - **Network**: one link per client. Each message (pub/sub ones too)
//!   draws its one-way latency from the configured range; a message never
//!   overtakes an earlier one in the same direction of the same link.
//! - **The protected resource**: one per lock. It keeps the highest
//!   fencing token it accepted and rejects lower ones; writes without a
//!   token are always accepted.
//!
//! # Determinism, and replaying a seed
//!
//! Same spec (seed included) => byte-identical history, on any machine, in
//! any process, however many runs came before. Every random choice comes
//! from ChaCha8 seeded with the spec's seed, one stream per component
//! (uuids, each client's link, each fault), so adding a fault does not
//! shift the draws of unrelated components. Nothing reads the wall clock,
//! nothing iterates a hash map, and nothing runs on another thread.
//! [`History::hash`] is the SHA1 of the history's JSON.
//!
//! To replay a run, run its spec again: a spec is serde data, so a saved
//! one reloads exactly; a generated one is `sim::generate(seed, profile)`
//! (on the command line, `locksim replay <seed> [--profile P]`). A
//! failing run is reproduced from its seed alone. `tests/determinism`
//! checks all this for 1 000 generated seeds, twice in one process and
//! once more in a fresh one.
//!
//! ```
//! let spec = sim::generate(7, None);
//! let a = sim::run(&spec).expect("generated specs are valid");
//! let b = sim::run(&spec).expect("generated specs are valid");
//! assert_eq!(a.history.hash(), b.history.hash());
//! assert_eq!(a.history.to_string(), b.history.to_string());
//! ```
//!
//! # Faults
//!
//! [`Fault`] values, at fixed virtual times:
//! - `crash` (optionally restarted: a new uuid, nothing remembered, the
//!   scripts start again); messages the dead process had in flight are lost.
//! - `pause` (stop the world): none of the client's code runs; timers,
//!   replies, messages and step completions that fall due are handled when
//!   it resumes, in their original order.
//! - `starve`: each timer and wake-up of the client falling in the window
//!   runs late by a delay drawn from the range.
//! - `partition`, `drop-rate`, `latency`: per-link windows, evaluated when
//!   a message is sent. A partition loses no message: the connection
//!   stays open and what was sent into it arrives at TCP's first
//!   retransmission after the heal (`retransmission`), behind which the
//!   link's later messages queue; a drop-rate loses messages outright.
//! - `redis-restart` without persistence: every key and connection lost;
//!   commands in flight get no reply (lockcore times them out) and
//!   subscriptions are gone.
//! - `redis-pause`: commands wait until it ends, then run in arrival order.
//! - `redis-down`, `delete-key`, `delay-replies`, `delay-requests`,
//!   `clock-jump` (Redis's clock), `clock-skew` and `clock-drift` (a
//!   client's own clock, which its lock reads as `now`: see `clock`),
//!   `replication-drop` (every replica's link, or one's, held: still
//!   connected), `replica-down` (one replica's link closed: the primary
//!   counts it out of `INFO` and `WAIT`) and `failover` (Redis's
//!   replicas, `[sim.redis]`).
//! - `interrupt`: `Thread.interrupt()` of one thread, at a time or a few
//!   ms into its next acquire; the application's own act, so the oracle
//!   never blames it for what follows.
//!
//! [`generate`] draws the first generator's runs ([`Workload::CLASSIC`]:
//! scripts that misuse the lock too, the first eight kinds from the
//! swarm's stream); [`generate_with`] draws any [`Workload`]: by default
//! correct usage, swarm faults ([`SwarmKinds::Swarm`]: a random subset of
//! every kind, each struck one to three times, each kind from a stream of
//! its own, so adding a kind changes no other seed's plan) and a liveness
//! phase after the faults (see `workload`).
//!
//! # Invariants
//!
//! See [`Invariant`]: mutual exclusion, fencing, release after crash, no
//! renewal after unlock, no lost wake-up, no lock left behind. Each is a
//! pure function of the [`History`]; a [`Violation`] names the invariant,
//! the virtual time, the clients, a one-line detail and the indexes of the
//! records involved.
//!
//! # The timeline
//!
//! `Display for History` prints one line per record: the virtual time, the
//! actor (`A/t1` a thread, `A` a process, `A~1` its first restart,
//! `redis`, `fault`, `net`), then what happened:
//!
//! ```text
//!    0.000000s  A/t1     call lock()
//!    0.002470s  redis    redisson:lock held by A/t1 x1 ttl=30000ms
//!    0.004937s  A/t1     lock -> acquired
//!   10.004000s  A        renew redisson:lock
//!   10.009036s  A        renew -> 1
//! ```
//!
//! # Layout: three layers, imports point down
//!
//! - **`model`**: what to simulate and what happened, as data, with no
//!   engine type in sight. `spec` ([`SimSpec`], [`ClientSpec`]); `step`,
//!   one file per kind of [`Step`] (`step/<kind>.rs`: its serde data, its
//!   rules, and the lock call or instructions it runs); `fault`, one file per kind (`fault/<kind>.rs`: its serde data,
//!   validation, timeline text, generator, link rule or timer delay, and
//!   what its window's edges do, written once in the verbs of
//!   `fault::effect`); `history` and `timeline` (the records and their
//!   one-line rendering), `drop_cause` (why the network lost a message:
//!   answered, or only timed out); `validate`; `script` (thread scripts flattened
//!   into the instructions every engine runs); `rng` (per-component streams); `config` (each
//!   client's lock config and the bounds every engine shares);
//!   `retransmission` (when what a partition held arrives); `server`
//!   (each Redis node's release line and AOF, set on fake-redis);
//!   `cluster` (a Redis Cluster's rules, [`MAX_SHARDS`]); `time`,
//!   `name`, `cut` ([`CutShort`]), `ended` (what an engine hands the
//!   judge), `error` ([`SimError`]).
//! - **`judge`**: reads the model alone. `check`, one checker per
//!   invariant ([`check_all`]); `cause`, the oracle ([`classify`]): misuse,
//!   beyond the guarantee, or a defect (in a cluster, judged without the
//!   faults on other masters than the lock's, `cause/shard`).
//! - **`engines`**: turn a spec into a history. `fast`, the discrete-event
//!   world (`world` and its event loop, `queue`, `network`, `windows`,
//!   `process`, `driver`, `clock`, `server`, `deployment`, `replication`,
//!   `execution`, `observe`, `resource`, `renewal`, `injection`, and
//!   `effects`, the fault verbs on the world; `inprocess`:
//!   [`InProcessServer`], [`InProcessTransport`], [`lock_value`]): the
//!   only folder whose modules import each other in a circle. `hosted`,
//!   lockcore's async client over RESP: on turmoil's simulated TCP against
//!   fake-redis's RESP server, or against a real `redis-server` (each with
//!   its `effects`, the same verbs); [`run_turmoil_bare`], the floor the
//!   turmoil engine is benchmarked against.
//! - On top: `run` ([`run`], [`run_turmoil`], [`run_real`], [`Run`]: an
//!   engine's history judged), `engine` ([`Engine`], which engine runs a
//!   spec), `swarm` ([`generate`]) and `workload` ([`Usage`],
//!   [`Workload`]: what generated scripts do, and the liveness phase),
//!   `client_settings` ([`SETTINGS_CHANCE`]: generated clients' Redisson
//!   settings), `server_settings` ([`SERVER_CHANCE`]: generated Redis's
//!   release line, AOFs and replicas; [`CLUSTER_CHANCE`]: a cluster for a
//!   plan that pauses one of its masters), `multi_locks` ([`MULTI_CHANCE`]: a
//!   generated thread on a multi-lock), `branch` ([`BranchPath`]: a run re-run from its first rare
//!   point with fresh draws).
//!
//! A new fault kind is its own file in `model/fault/` plus one line in
//! the `faults!` registration; every engine carries it out through the
//! verbs it uses, or refuses it by name. A new verb is one method of
//! `Effects`, which every engine must then implement (the trait has no
//! defaults).
//!
//! Examples (`cargo run -p sim --example <name>`): `timeline <seed>` prints
//! a generated seed's spec, timeline and violations; `violations [n]`
//! counts what the swarm finds over n seeds; `swarm_stats [n]` times runs;
//! `fenced_pause` replays the documents' stop-the-world pause under the
//! `fenced` profile.

pub mod branch;
mod client_settings;
pub mod directed;
mod engine;
mod engines;
mod judge;
mod lock_types;
mod model;
mod multi_locks;
pub mod pct;
mod run;
mod server_settings;
mod strategy;
mod swarm;
mod workload;

pub use branch::{BadBranch, BranchPath, Fork};
pub use engine::{DEFAULT_TIME_SCALE, Engine};
pub use judge::cause::{Cause, classify};
pub use judge::check::{Case, Invariant, Violation, check_all, check_all_counted};
pub use judge::coverage::{Coverage, Point, Source as PointSource};
pub use judge::residue::{Residue, TOKEN_KEY_ISSUE};
pub use model::cut::CutShort;
pub use model::drop_cause::DropCause;
pub use model::fault::{Fault, FaultPlan};

pub use client_settings::{HUGE_RETRIES_CHANCE, SETTINGS_CHANCE};
pub use engines::fast::inprocess::{InProcessServer, InProcessTransport, lock_value};
pub use engines::hosted::{
    BareRun, REAL_DELAY_MS, REDIS_FAULTS, RealRedis, RedisTarget, TURMOIL_FAULTS, run_turmoil_bare,
};
pub use lock_types::{LOCK_TYPES, LockType};
pub use model::cluster::MAX_SHARDS;
pub use model::config::client_timer_tick_ms;
pub use model::error::SimError;
pub use model::fault::kinds as faults;
pub use model::fault::{LockKey, Verb, verbs};
pub use model::history::{
    Direction, History, Meta, Outcome, Phase, ProbeBound, Proc, Record, RecordKind, ReleaseCause,
    Retries, ServerCause, UnlockError, Who,
};
pub use model::leftover::LeftoverKind;
pub use model::reseed::Reseed;
pub use model::spec::{
    ClientSpec, DEFAULT_LOCK, LatencyRange, RedisSpec, RetryJitter, SimSpec, ThreadSpec,
};
pub use model::step::Step;
pub use model::step::kinds as steps;
pub use model::time::{ClientId, SimTime};
pub use model::validate::{
    MAX_CLIENTS, MAX_DELAY_MS, MAX_FAULTS, MAX_HORIZON_MS, MAX_LEASE_MS, MAX_STEPS, MAX_THREADS,
    NAME_RULE, is_identifier, validate_spec,
};
pub use multi_locks::{MASTERS_CHANCE, MULTI_CHANCE, THIRD_LOCK};
pub use run::{Run, run, run_owned, run_real, run_turmoil};
pub use server_settings::SERVER_CHANCE;
pub use strategy::{Strategy, UnknownStrategy};
pub use swarm::{CLUSTER_CHANCE, KIND_CHANCE, SWARM_CHANCE, SwarmKinds, generate, generate_with};
pub use workload::{PROBE, Usage, Workload};
