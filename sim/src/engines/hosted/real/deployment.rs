//! A deployment for one run: a primary and `replicas` real
//! `redis-server` processes on loopback, each replica started with
//! `--replicaof` the primary, in a temporary directory of their own;
//! dropping it (on every path, a panic's unwind too) kills every process
//! and removes the directory. No server saves RDB snapshots; the primary
//! writes an AOF when the spec's `appendonly` says so and the replicas
//! when `replica_appendonly` does (each in a folder of its own, fsync
//! every second, Redis's default), so `INFO` reports `aof_enabled` as
//! Redisson 3.46+ reads it. A node keeps its own setting when a failover
//! changes its role, as the fast engine's nodes do.
//!
//! Each server is started from a configuration file of its own, as
//! Sentinel's servers are: Sentinel's reconfiguration sends `CONFIG
//! REWRITE` (see `sentinel`), which fails on a server started without one.
//! Replicas sync through an RDB file in the directory (`repl-diskless-sync
//! no`): after a diskless sync a Redis 7.0 primary streams nothing to the
//! replica until its first `REPLCONF ACK`, which the replica's cron sends
//! up to a real second later, unscaled, so a primary restarted as a
//! replica after a failover would be counted out of the clients' `WAIT`s
//! for seconds of the spec's time.

use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::SimError;

/// How long a started server may take to accept connections.
const READY_WITHIN: Duration = Duration::from_secs(10);

fn failed(reason: String) -> SimError {
    SimError::Engine {
        engine: "redis".to_owned(),
        reason,
    }
}

/// One server of the deployment: its port, and its process while it runs.
#[derive(Debug)]
struct Node {
    port: u16,
    child: Option<Child>,
}

/// The run's servers; node 0 starts as the primary.
#[derive(Debug)]
pub(crate) struct Deployment {
    dir: PathBuf,
    nodes: Vec<Node>,
    aof: Aof,
}

/// Which servers write an AOF: the first primary, and the replicas.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Aof {
    pub(crate) primary: bool,
    pub(crate) replicas: bool,
}

impl Aof {
    /// Node `i`'s setting (node 0 starts as the primary).
    fn of(self, i: usize) -> bool {
        if i == 0 { self.primary } else { self.replicas }
    }
}

fn free_port() -> Result<u16, SimError> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| failed(format!("no free loopback port: {e}")))
}

impl Deployment {
    /// Starts a primary and `replicas` replicas of it and waits until each
    /// accepts connections (the replicas' first sync is waited for by the
    /// engine, which has a RESP connection to ask `INFO replication`).
    pub(crate) fn start(replicas: u32, aof: Aof) -> Result<Deployment, SimError> {
        // A port found free may be taken by another test's server before
        // ours binds it (ours then exits, or another answers): new ports.
        let mut tries = 0;
        loop {
            match Deployment::start_once(replicas, aof) {
                Err(e) if tries < 4 => {
                    tries += 1;
                    tracing::debug!("redis deployment did not start ({e}); again on new ports");
                }
                done => return done,
            }
        }
    }

    fn start_once(replicas: u32, aof: Aof) -> Result<Deployment, SimError> {
        // Unique per process and run: runs in one test binary share a pid.
        static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let unique = format!("locksim-redis-{}-{run}", std::process::id());
        // On tmpfs where there is one: Sentinel's `CONFIG REWRITE` fsyncs
        // the configuration file, and on a disk that takes milliseconds
        // of the run's scaled time.
        let shm = std::path::Path::new("/dev/shm");
        let base = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(unique);
        std::fs::create_dir_all(&dir)
            .map_err(|e| failed(format!("cannot create {}: {e}", dir.display())))?;
        // From here on, Drop cleans up whatever was started.
        let mut deployment = Deployment {
            dir,
            nodes: Vec::new(),
            aof,
        };
        for _ in 0..=replicas {
            let port = free_port()?;
            deployment.nodes.push(Node { port, child: None });
        }
        let primary = deployment.nodes[0].port;
        for i in 0..deployment.nodes.len() {
            let replica_of = (i > 0).then_some(primary);
            deployment.spawn(i, replica_of)?;
        }
        for i in 0..deployment.nodes.len() {
            deployment.wait_ready(i)?;
        }
        Ok(deployment)
    }

    /// Starts node `i`'s process (again), a replica of the server on
    /// `replica_of` if given, without waiting for it.
    pub(crate) fn spawn(&mut self, i: usize, replica_of: Option<u16>) -> Result<(), SimError> {
        let port = self.nodes[i].port;
        let conf = self.dir.join(format!("node-{i}.conf"));
        let appendonly = if self.aof.of(i) { "yes" } else { "no" };
        let mut text = format!(
            "port {port}\nbind 127.0.0.1\nsave \"\"\nappendonly {appendonly}\nappenddirname node-{i}-aof\n\
             dir {}\ndbfilename node-{i}.rdb\n\
             repl-diskless-load swapdb\nrepl-diskless-sync no\nenable-debug-command local\n",
            self.dir.display()
        );
        if let Some(primary) = replica_of {
            text.push_str(&format!("replicaof 127.0.0.1 {primary}\n"));
        }
        std::fs::write(&conf, text)
            .map_err(|e| failed(format!("cannot write {}: {e}", conf.display())))?;
        let child = Command::new("redis-server")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                failed(format!(
                    "cannot start redis-server ({e}); install it (apt-get install redis-server) to run replicas on the redis engine"
                ))
            })?;
        self.nodes[i].child = Some(child);
        Ok(())
    }

    /// Waits until node `i` accepts connections.
    fn wait_ready(&mut self, i: usize) -> Result<(), SimError> {
        let port = self.nodes[i].port;
        let started = Instant::now();
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            if let Some(child) = self.nodes[i].child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                return Err(failed(format!(
                    "redis-server on port {port} exited at start: {status}"
                )));
            }
            if started.elapsed() > READY_WITHIN {
                return Err(failed(format!(
                    "redis-server did not accept connections on port {port} within {}s",
                    READY_WITHIN.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let own = self.nodes[i].child.as_ref().map(Child::id);
        match fake_redis::testing::server_pid((Ipv4Addr::LOCALHOST, port).into(), None) {
            Ok(pid) if Some(pid) == own => Ok(()),
            Ok(pid) => Err(failed(format!(
                "port {port} is served by process {pid}, not by the redis-server started"
            ))),
            Err(e) => Err(failed(format!("INFO server on port {port}: {e}"))),
        }
    }

    /// Kills node `i`'s process, as a crashed host: its connections close.
    pub(crate) fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.nodes[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Node `i`'s `HOST:PORT`.
    pub(crate) fn addr(&self, i: usize) -> String {
        format!("127.0.0.1:{}", self.nodes[i].port)
    }

    /// Node `i`'s port.
    #[cfg(test)]
    fn port(&self, i: usize) -> u16 {
        self.nodes[i].port
    }

    /// How many servers (the primary and its replicas).
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }
}

impl Drop for Deployment {
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.kill(i);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deployment's processes and directory, its primary's AOF folder
    /// included, are gone once it is dropped: nothing outlives the run.
    #[test]
    fn dropping_a_deployment_leaves_nothing() {
        let aof = Aof {
            primary: true,
            replicas: false,
        };
        let deployment = match Deployment::start(1, aof) {
            Ok(d) => d,
            Err(e) => panic!("this test needs redis-server: {e}"),
        };
        let dir = deployment.dir.clone();
        let pids: Vec<u32> = deployment
            .nodes
            .iter()
            .filter_map(|n| n.child.as_ref().map(Child::id))
            .collect();
        assert_eq!(pids.len(), 2);
        assert!(dir.is_dir());
        let ports: Vec<u16> = (0..deployment.len()).map(|i| deployment.port(i)).collect();
        drop(deployment);
        assert!(!dir.exists(), "{} is left", dir.display());
        for pid in &pids {
            assert!(
                !PathBuf::from(format!("/proc/{pid}")).exists(),
                "redis-server {pid} is left"
            );
        }
        // A parallel test may take a freed port at once: what must not
        // answer there is one of ours.
        for port in ports {
            if let Ok(pid) =
                fake_redis::testing::server_pid((Ipv4Addr::LOCALHOST, port).into(), None)
            {
                assert!(
                    !pids.contains(&pid),
                    "redis-server {pid} still serves {port}"
                );
            }
        }
    }
}
